#pragma once
// How the CUDA backend runs the log-sum-product steps of MP IS (mpis.md §3.4): the generic
// strided kernel (one output element per thread, estimate/log_sum_product_element.hpp), a tiled
// shared-memory log-semiring GEMM for GEMM-shaped steps, or cuBLAS strided-batched GEMM on
// max-shifted exponentials (the alternative path of the issue, exact while offsets stay within
// double range). The CPU backend always runs the generic element.

#include <string>

#include "myriad/core/enum_names.hpp"

namespace myriad {

enum class ContractionPath { automatic, generic, tiled, cublas };

inline constexpr EnumName<ContractionPath> kContractionPathNames[] = {
    {ContractionPath::automatic, "auto"},
    {ContractionPath::generic, "generic"},
    {ContractionPath::tiled, "tiled"},
    {ContractionPath::cublas, "cublas"}};

inline std::string to_string(ContractionPath path) {
  return enum_name(kContractionPathNames, path);
}

}  // namespace myriad

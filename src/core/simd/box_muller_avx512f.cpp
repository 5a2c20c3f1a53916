// BoxMullerKernel for avx512f (compiled with its instruction set: src/CMakeLists.txt).

#include "box_muller_kernel_impl.hpp"

namespace myriad::detail {

MYRIAD_BOX_MULLER_INSTANCES(, xsimd::avx512f)

}  // namespace myriad::detail

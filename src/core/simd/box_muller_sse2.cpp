// BoxMullerKernel for sse2 (compiled with its instruction set: src/CMakeLists.txt).

#include "box_muller_kernel_impl.hpp"

namespace myriad::detail {

MYRIAD_BOX_MULLER_INSTANCES(, xsimd::sse2)

}  // namespace myriad::detail

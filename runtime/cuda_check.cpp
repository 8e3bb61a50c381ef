#include "runtime/cuda_check.h"

#include <fmt/format.h>

namespace dash::rt {

void throw_cuda_error(cudaError_t err, char const* call, char const* file, int line) {
  throw CudaError(fmt::format("CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(err),
                              cudaGetErrorString(err), call, file, line));
}

}  // namespace dash::rt

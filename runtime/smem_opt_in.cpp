#include "runtime/smem_opt_in.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <set>
#include <utility>

#include "runtime/cuda_check.h"

namespace dash::rt {

void opt_in_dynamic_smem(void const* kernel, int bytes) {
  int device = 0;
  DASH_CUDA_CHECK(cudaGetDevice(&device));
  static std::mutex mutex;
  static std::set<std::pair<void const*, int>> done;
  std::lock_guard<std::mutex> const lock(mutex);
  if (done.contains({kernel, device})) return;
  DASH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  done.insert({kernel, device});
}

}  // namespace dash::rt

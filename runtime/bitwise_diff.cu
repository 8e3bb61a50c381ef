// Device-side bitwise comparison of two buffers (see bitwise_diff.h).
#include "runtime/bitwise_diff.h"

#include "runtime/cuda_check.h"

namespace dash::rt {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) count_diff_kernel(std::uint16_t const* a, std::uint16_t const* b,
                                                              std::size_t words,
                                                              unsigned long long* count) {
  std::size_t const stride = std::size_t{gridDim.x} * kThreads;
  unsigned long long local = 0;
  for (std::size_t i = std::size_t{blockIdx.x} * kThreads + threadIdx.x; i < words; i += stride) {
    local += a[i] != b[i] ? 1ULL : 0ULL;
  }
  // One atomic per warp with a difference, not per element.
  for (int off = 16; off > 0; off >>= 1) local += __shfl_down_sync(0xffffffffu, local, off);
  if ((threadIdx.x & 31) == 0 && local != 0) atomicAdd(count, local);
}

}  // namespace

std::int64_t count_differing_words(void const* a, void const* b, std::size_t words, cudaStream_t stream) {
  unsigned long long* d_count = nullptr;
  DASH_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&d_count), sizeof(*d_count), stream));
  DASH_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(*d_count), stream));
  count_diff_kernel<<<1024, kThreads, 0, stream>>>(static_cast<std::uint16_t const*>(a),
                                                   static_cast<std::uint16_t const*>(b), words, d_count);
  DASH_CUDA_CHECK_LAUNCH();
  unsigned long long host = 0;
  DASH_CUDA_CHECK(cudaMemcpyAsync(&host, d_count, sizeof(host), cudaMemcpyDeviceToHost, stream));
  DASH_CUDA_CHECK(cudaFreeAsync(d_count, stream));
  DASH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<std::int64_t>(host);
}

}  // namespace dash::rt

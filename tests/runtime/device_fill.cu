#include "device_fill.h"

#include "dagsim/core/splitmix.h"
#include "runtime/cuda_check.h"
#include "runtime/warp_mma.cuh"

namespace dash::rt::test {
namespace {

template <int DT>
__global__ void fill_kernel(std::uint16_t* data, std::int64_t n, std::uint64_t seed) {
  using E = warp::Elem<DT>;
  std::int64_t const stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    // Value i + 1 of the splitmix64 stream of `seed` (the host harness's generator), drawn directly.
    std::uint64_t const z = sim::splitmix64_mix(seed + static_cast<std::uint64_t>(i + 1) * sim::kSplitmix64Gamma);
    float const u = static_cast<float>(z >> 40) * 0x1.0p-24f;  // [0, 1)
    float v = 2.f * u - 1.f;
    if (v == 0.f) v = 0.5f;
    auto const x = E::from_float(v);
    data[i] = *reinterpret_cast<std::uint16_t const*>(&x);
  }
}

}  // namespace

void fill_random_device(void* data, std::int64_t n, DType dtype, std::uint64_t seed, cudaStream_t stream) {
  auto* p = static_cast<std::uint16_t*>(data);
  constexpr int kThreads = 256;
  constexpr int kBlocks = 4096;
  if (dtype == DType::kBf16) {
    fill_kernel<0><<<kBlocks, kThreads, 0, stream>>>(p, n, seed);
  } else {
    fill_kernel<1><<<kBlocks, kThreads, 0, stream>>>(p, n, seed);
  }
  DASH_CUDA_CHECK_LAUNCH();
}

}  // namespace dash::rt::test

// GPU test of the wgmma forms the Hopper kernel uses (runtime/kernels/sm90/wgmma.cuh), one
// warpgroup, against a CPU GEMM: both operands in shared memory K-major (S^T = K Q^T), A from
// registers with B MN-major (dV += P^T dO), both MN-major (dQ = dS K). Operands are written with
// the kernel's 128-byte swizzle; values are multiples of 1/4 in [-2, 2], so every product and sum
// is exact in fp32 and the check is equality. Skips unless the GPU runs sm_90a code.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <cuda_bf16.h>

#include "harness.h"
#include "runtime/cuda_check.h"
#include "runtime/kernels/sm90/tma.cuh"
#include "runtime/kernels/sm90/wgmma.cuh"

namespace dash::rt::test {
namespace {

using sm90::smem_desc;

/// Byte offset of element (row, col) of an operand stored as 64-column blocks of `rows` rows,
/// 128-byte swizzled (the layout TMA writes with CU_TENSOR_MAP_SWIZZLE_128B).
[[maybe_unused]] __host__ __device__ inline std::uint32_t swizzled(int row, int col, int rows) {
  int const blk = col / 64;
  int const c = col % 64;
  return static_cast<std::uint32_t>(blk * rows * 128 + row * 128 + (((c / 8) ^ (row % 8)) * 16) + (c % 8) * 2);
}

enum class Form { kSsKK, kRsMn, kSsMnMn };

/// D (64 x N) = A (64 x K) B (K x N). a: row-major 64 x K, b: row-major K x N, d: row-major 64 x N.
template <Form F, int N, int K>
__global__ void __launch_bounds__(128) gemm_kernel(float const* a, float const* b, float* d) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();
#else
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* sa = smem;                  // A: 64 x K
  unsigned char* sb = smem + 64 * K * 2;     // B: K x N
  int const tid = static_cast<int>(threadIdx.x);
  // K-major A: rows M, columns K. MN-major A: rows K, columns M. K-major B: rows N, columns K.
  // MN-major B: rows K, columns N.
  for (int x = tid; x < 64 * K; x += 128) {
    int const m = x / K;
    int const k = x % K;
    std::uint32_t const at = F == Form::kSsMnMn ? swizzled(k, m, K) : swizzled(m, k, 64);
    *reinterpret_cast<__nv_bfloat16*>(sa + at) = __float2bfloat16(a[x]);
  }
  for (int x = tid; x < K * N; x += 128) {
    int const k = x / N;
    int const n = x % N;
    std::uint32_t const at = F == Form::kSsKK ? swizzled(n, k, N) : swizzled(k, n, K);
    *reinterpret_cast<__nv_bfloat16*>(sb + at) = __float2bfloat16(b[x]);
  }
  sm90::fence_proxy_async_shared();
  __syncthreads();
  auto const base_a = static_cast<std::uint32_t>(__cvta_generic_to_shared(sa));
  auto const base_b = static_cast<std::uint32_t>(__cvta_generic_to_shared(sb));
  float acc[N / 2];
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.f;
  int const w = tid / 32;
  int const g = (tid % 32) / 4;
  int const t = tid % 4;
  sm90::fence();
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    if constexpr (F == Form::kSsKK) {
      // As S^T = K Q^T: K-major, the k-th 16 columns 32 k bytes into their 64-column block.
      std::uint32_t const off_a = (kk / 4) * 64 * 128 + (kk % 4) * 32;
      std::uint32_t const off_b = (kk / 4) * N * 128 + (kk % 4) * 32;
      std::uint64_t const da = smem_desc(base_a + off_a, 16, 1024);
      std::uint64_t const db = smem_desc(base_b + off_b, 16, 1024);
      if constexpr (N == 64) {
        sm90::mma_ss_n64<0, 0, 0>(acc, da, db, kk > 0);
      } else {
        sm90::mma_ss_n128<0, 0, 0>(acc, da, db, kk > 0);
      }
    } else if constexpr (F == Form::kRsMn) {
      // As dV += P^T dO: A fragment from registers, B MN-major (16 rows of K = 2048 bytes).
      std::uint32_t fa[4];
      auto pack = [&](int m, int k) {
        __nv_bfloat162 const v = __floats2bfloat162_rn(a[m * K + k], a[m * K + k + 1]);
        return *reinterpret_cast<std::uint32_t const*>(&v);
      };
      int const m = 16 * w + g;
      int const k = 16 * kk + 2 * t;
      fa[0] = pack(m, k);
      fa[1] = pack(m + 8, k);
      fa[2] = pack(m, k + 8);
      fa[3] = pack(m + 8, k + 8);
      std::uint64_t const db = smem_desc(base_b + kk * 2048, K * 128, 1024);
      sm90::fence();
      if constexpr (N == 64) {
        sm90::mma_rs_n64<0, 1>(acc, fa, db, 1);
      } else {
        sm90::mma_rs_n128<0, 1>(acc, fa, db, 1);
      }
    } else {
      // As dQ = dS K: both MN-major.
      std::uint64_t const da = smem_desc(base_a + kk * 2048, K * 128, 1024);
      std::uint64_t const db = smem_desc(base_b + kk * 2048, K * 128, 1024);
      sm90::mma_ss_n64<0, 1, 1>(acc, da, db, kk > 0);
    }
  }
  sm90::commit();
  sm90::wait<0>();
  sm90::fence_operand(acc);
  for (int j = 0; j < N / 8; ++j) {
    for (int e = 0; e < 4; ++e) {
      int const row = 16 * w + g + 8 * (e / 2);
      int const col = 8 * j + 2 * t + (e % 2);
      d[row * N + col] = acc[4 * j + e];
    }
  }
#endif
}

template <Form F, int N, int K>
int mismatches(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> a(64 * K);
  std::vector<float> b(K * N);
  for (auto& x : a) x = static_cast<float>(rng.below(17) - 8) / 4.f;
  for (auto& x : b) x = static_cast<float>(rng.below(17) - 8) / 4.f;
  std::vector<float> want(64 * N, 0.f);
  for (int m = 0; m < 64; ++m) {
    for (int n = 0; n < N; ++n) {
      float s = 0.f;
      for (int k = 0; k < K; ++k) s += a[m * K + k] * b[k * N + n];
      want[m * N + n] = s;
    }
  }
  float* da = nullptr;
  float* db = nullptr;
  float* dd = nullptr;
  DASH_CUDA_CHECK(cudaMalloc(&da, a.size() * 4));
  DASH_CUDA_CHECK(cudaMalloc(&db, b.size() * 4));
  DASH_CUDA_CHECK(cudaMalloc(&dd, want.size() * 4));
  DASH_CUDA_CHECK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  DASH_CUDA_CHECK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  DASH_CUDA_CHECK(cudaMemset(dd, 0xff, want.size() * 4));  // NaN poison
  int const smem = (64 * K + K * N) * 2;
  DASH_CUDA_CHECK(cudaFuncSetAttribute(gemm_kernel<F, N, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  gemm_kernel<F, N, K><<<1, 128, smem>>>(da, db, dd);
  DASH_CUDA_CHECK_LAUNCH();
  std::vector<float> got(want.size());
  DASH_CUDA_CHECK(cudaMemcpy(got.data(), dd, got.size() * 4, cudaMemcpyDeviceToHost));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dd);
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      if (bad < 3) std::printf("  [%zu] (%zu, %zu): got %g, want %g\n", i, i / N, i % N, got[i], want[i]);
      ++bad;
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("sm90 wgmma forms of the Hopper kernel equal a CPU GEMM", "[gpu]") {
#if !defined(DASH_SM90A)
  SUCCEED("built without sm_90a code");
  return;
#endif
  std::vector<KernelFamily> const runs = device_families();
  if (std::find(runs.begin(), runs.end(), KernelFamily::kSm90) == runs.end()) {
    SUCCEED("not an sm_90a GPU");
    return;
  }
  CHECK(mismatches<Form::kSsKK, 64, 128>(1) == 0);   // S^T at head_dim 128 (64-row Q tile)
  CHECK(mismatches<Form::kSsKK, 128, 64>(2) == 0);   // S^T at head_dim 64 (128-row Q tile)
  CHECK(mismatches<Form::kRsMn, 128, 64>(3) == 0);   // dV, dK at head_dim 128
  CHECK(mismatches<Form::kRsMn, 64, 128>(4) == 0);   // dV, dK at head_dim 64
  CHECK(mismatches<Form::kSsMnMn, 64, 128>(5) == 0);  // dQ
}

}  // namespace dash::rt::test

// Does compute-sanitizer's initcheck see global memory written by the bulk copy engine?
//
// The sm90 backward writes its fp32 dQ accumulator only with bulk stores and bulk reduce-adds
// (runtime/kernels/sm90/kernel.cuh, the dQ writer); initcheck reports the postprocess's reads of it
// as uninitialized (docs/results/2026-12-03-h200-watchdog.md). This probe separates the tool from
// the kernel: one buffer, never written by the host, is written by one kernel in the way the case
// names and read by a second kernel.
//
//   initcheck_probe CASE     CASE: none | st | bulk-store | bulk-store-reduce | memset-reduce
//
// Run under `compute-sanitizer --tool initcheck`: `none` must be reported (the tool works), `st`
// must not (plain stores are tracked); the bulk cases say whether the engine's writes are tracked.
// Without the tool, the probe checks the values the reading kernel saw (exit 1 if wrong), so a
// silent tool cannot hide a buffer the bulk copy did not write. sm_90a only.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

namespace {

constexpr int kFloats = 4096;  // 16 KB: one bulk operation
constexpr int kThreads = 256;

__device__ __forceinline__ unsigned smem_addr(void const* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Writes dst[i] = i + 1 (mode 1: st.global; 2: one bulk store; 3: a bulk store of i, then a bulk
/// reduce-add of 1; 4: a bulk reduce-add of i + 1 onto memset zeros).
__global__ void write(float* dst, int mode) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ alignas(128) float stage[kFloats];
  if (mode == 1) {
    for (int i = static_cast<int>(threadIdx.x); i < kFloats; i += kThreads) dst[i] = static_cast<float>(i + 1);
    return;
  }
  for (int i = static_cast<int>(threadIdx.x); i < kFloats; i += kThreads) {
    stage[i] = static_cast<float>(mode == 3 ? i : i + 1);
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned const src = smem_addr(stage);
    if (mode == 2 || mode == 3) {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(src),
                   "r"(kFloats * 4)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
      asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
    }
  }
  __syncthreads();
  if (mode == 3) {
    for (int i = static_cast<int>(threadIdx.x); i < kFloats; i += kThreads) stage[i] = 1.f;
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
  }
  if (threadIdx.x == 0 && (mode == 3 || mode == 4)) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst),
                 "r"(smem_addr(stage)), "r"(kFloats * 4)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  }
#endif
}

/// Counts the elements that differ from i + 1.
__global__ void read(float const* src, int* wrong) {
  int bad = 0;
  for (int i = static_cast<int>(threadIdx.x); i < kFloats; i += kThreads) {
    bad += src[i] != static_cast<float>(i + 1) ? 1 : 0;
  }
  atomicAdd(wrong, bad);
}

int fail(char const* what, cudaError_t e) {
  std::fprintf(stderr, "initcheck_probe: error: %s: %s\n", what, cudaGetErrorString(e));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  char const* const cases[] = {"none", "st", "bulk-store", "bulk-store-reduce", "memset-reduce"};
  int mode = -1;
  for (int m = 0; argc == 2 && m < 5; ++m) {
    if (std::strcmp(argv[1], cases[m]) == 0) mode = m;
  }
  if (mode < 0) {
    std::fprintf(stderr, "initcheck_probe: error: usage: initcheck_probe none|st|bulk-store|bulk-store-reduce|memset-reduce\n");
    return 2;
  }
  float* buf = nullptr;
  int* wrong = nullptr;
  if (cudaError_t e = cudaMalloc(&buf, kFloats * sizeof(float)); e != cudaSuccess) return fail("cudaMalloc", e);
  if (cudaError_t e = cudaMalloc(&wrong, sizeof(int)); e != cudaSuccess) return fail("cudaMalloc", e);
  if (cudaError_t e = cudaMemset(wrong, 0, sizeof(int)); e != cudaSuccess) return fail("cudaMemset", e);
  if (mode == 4) {
    if (cudaError_t e = cudaMemset(buf, 0, kFloats * sizeof(float)); e != cudaSuccess) return fail("cudaMemset", e);
  }
  if (mode > 0) write<<<1, kThreads>>>(buf, mode);
  read<<<1, kThreads>>>(buf, wrong);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return fail("kernels", e);
  int host_wrong = 0;
  if (cudaError_t e = cudaMemcpy(&host_wrong, wrong, sizeof(int), cudaMemcpyDeviceToHost); e != cudaSuccess) {
    return fail("cudaMemcpy", e);
  }
  std::printf("initcheck_probe %s: %d of %d values wrong\n", cases[mode], host_wrong, kFloats);
  cudaFree(buf);
  cudaFree(wrong);
  // `none` reads whatever the allocation held: its values are not checked.
  return mode == 0 || host_wrong == 0 ? 0 : 1;
}

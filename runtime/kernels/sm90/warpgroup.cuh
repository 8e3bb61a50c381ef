#pragma once
// Warpgroup-level control (sm_90): named barriers among a subset of the CTA's warps and the
// register reallocation between producer and MMA warpgroups (setmaxnreg).
namespace dash::rt::sm90 {

/// A barrier of `count` threads (a multiple of 32) on hardware barrier `id` (1..15; 0 is
/// __syncthreads'), for subsets of the CTA's warps.
__device__ __forceinline__ void named_barrier(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/// Gives this warpgroup's registers back (producer warps) or takes them (MMA warpgroups): every
/// warp of the warpgroup executes it.
template <int N>
__device__ __forceinline__ void regs_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void regs_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace dash::rt::sm90

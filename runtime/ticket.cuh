#pragma once
// dQ and GQA dK/dV tickets: the contribution of rank w waits until its tile's ticket reads w
// (acquire), adds, and once its adds are complete in global memory releases w + 1 (release).
// Debug builds (DASH_WATCHDOG) trap with (CTA, tile, rank) after ~10 s of spinning: a schedule
// that deadlocks or a bug, never a hang.
#include <cstdio>

namespace dash::rt::ticket {

__device__ __forceinline__ int ld_acquire(int const* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
/// A poll that does not invalidate L1 (ld.acquire does, on every read); spin_until adds the
/// acquire fence once the value is seen.
__device__ __forceinline__ int ld_relaxed(int const* p) {
  int v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void fence_acquire() { asm volatile("fence.acq_rel.gpu;\n" ::: "memory"); }
__device__ __forceinline__ void st_release(int* p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

/// Spins (this thread alone) until *ticket == rank, then acquires: relaxed polls and one fence
/// (the PTX memory model's acquire pattern), which synchronizes with the release of rank.
/// `tile` names the ticket in the watchdog's message.
__device__ __forceinline__ void spin_until(int const* ticket, int rank, int tile) {
#if defined(DASH_WATCHDOG)
  long long const start = clock64();
#endif
  while (ld_relaxed(ticket) != rank) {
#if defined(DASH_WATCHDOG)
    if (clock64() - start > 20000000000LL) {
      printf("dash watchdog: CTA %d stuck on tile %d waiting for rank %d (ticket %d)\n",
             static_cast<int>(blockIdx.x), tile, rank, ld_acquire(ticket));
      __trap();
    }
#else
    (void)tile;
#endif
  }
  fence_acquire();
}

}  // namespace dash::rt::ticket

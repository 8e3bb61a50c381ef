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
/// A poll that does not invalidate L1 (ld.acquire does, on every read); spin_until acquires once
/// the value is seen.
__device__ __forceinline__ int ld_relaxed(int const* p) {
  int v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(int* p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

/// Spins (this thread alone) until *ticket == rank, then acquires: relaxed polls, then one
/// ld.acquire of the same ticket, which reads rank too (only this contribution moves the ticket
/// on) and so synchronizes with its release. An acquire load, not fence.acq_rel: the fence waits
/// for every earlier memory operation of the thread (MEMBAR.GPU), on the chain's critical path.
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
  (void)ld_acquire(ticket);
}

}  // namespace dash::rt::ticket

#pragma once
// dQ and GQA dK/dV tickets: the contribution of rank w waits until its tile's ticket reads w
// (acquire), adds, and once its adds are complete in global memory releases w + 1 (release).
// Every wait is bounded (BwdParams::watchdog): past the limit the CTA records (CTA, tile, rank,
// what the ticket reads) in the host-mapped watchdog record and traps, and the host names the wait
// (runtime/watchdog.h). A schedule that cannot finish or a bug, never a hang.
#include <cstdint>

#include "runtime/watchdog_record.h"

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

/// The global timer in units of 1024 ns, 32 bits: a wait holds one register for its start, and
/// unsigned differences stay right across one wrap (every 73 minutes; limits are at most 1 h).
__device__ __forceinline__ std::uint32_t global_us() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return static_cast<std::uint32_t>(t >> 10);
}

/// An expired wait: the first CTA to claim the record writes it (the `expired` flag last, after a
/// system-scope fence, so the host never sees a partial record) and traps. A CTA that loses the
/// claim waits (up to about a second) until the record is complete before it traps too: its trap
/// ends the grid, and with it the writes of the CTA that claimed the record.
__device__ __forceinline__ void expire(TicketWatchdog const& wd, int const* ticket, int rank, int tile,
                                       std::uint32_t waited) {
  WatchdogRecord volatile* r = wd.record;
  if (atomicCAS(wd.claim, 0, 1) == 0) {
    r->cta = static_cast<std::int32_t>(blockIdx.x);
    r->tile = tile;
    r->rank = rank;
    r->seen = ld_relaxed(ticket);
    r->waited_ns = std::int64_t{waited} << 10;
    __threadfence_system();
    r->expired = 1;
    __threadfence_system();
  } else {
    std::uint32_t const start = global_us();
    while (r->expired == 0 && global_us() - start < 1000000 / 1024) {
    }
  }
  __trap();
}

/// Spins (this thread alone) until *ticket == rank, then acquires: relaxed polls, then one
/// ld.acquire of the same ticket, which reads rank too (only this contribution moves the ticket
/// on) and so synchronizes with its release. An acquire load, not fence.acq_rel: the fence waits
/// for every earlier memory operation of the thread (MEMBAR.GPU), on the chain's critical path.
/// The clock is read only once the first poll has missed, and then every 64 polls: a wait that
/// does not spin costs nothing more. `tile` names the ticket in the watchdog's record.
__device__ __forceinline__ void spin_until(int const* ticket, int rank, int tile, TicketWatchdog const& wd) {
  if (ld_relaxed(ticket) != rank) {
    std::uint32_t const start = global_us();
    for (unsigned polls = 1; ld_relaxed(ticket) != rank; ++polls) {
      if (polls % 64 == 0 && wd.record != nullptr) {
        std::uint32_t const waited = global_us() - start;
        if (waited > wd.limit_us) expire(wd, ticket, rank, tile, waited);
      }
    }
  }
  (void)ld_acquire(ticket);
}

}  // namespace dash::rt::ticket

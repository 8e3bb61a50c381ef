#pragma once
// The ticket watchdog's record and the kernels' view of it. A deterministic backward's ticket wait
// is bounded: a CTA that waits longer than the limit claims the record, writes what it waited for
// and traps (runtime/ticket.cuh). The record sits in host memory mapped into the device's address
// space, so it survives the trap that ends the kernel and the host can name the wait
// (runtime/watchdog.h; docs/design.md, "Never a hang"). Plain structs: device code includes this.
#include <cstdint>

namespace dash::rt {

struct WatchdogRecord {
  std::int32_t expired;  ///< 1 once the fields below are written (stored last, after a system fence)
  std::int32_t cta;      ///< blockIdx.x of the waiting CTA
  std::int32_t tile;     ///< >= 0: the dQ tile; < 0: the dK/dV tile -1 - tile (GQA)
  std::int32_t rank;     ///< the rank the CTA waited for
  std::int32_t seen;     ///< what the ticket read when the wait expired
  std::int32_t pad;
  std::int64_t waited_ns;  ///< how long it had waited
};

/// BwdParams::watchdog: where an expired wait reports, and after how long a wait expires.
struct TicketWatchdog {
  WatchdogRecord* record = nullptr;  ///< host-mapped; null: waits are unbounded
  int* claim = nullptr;              ///< device memory, 0 until a CTA claims the record
  std::uint32_t limit_us = 0;         ///< in units of 1024 ns (the kernels' timer, runtime/ticket.cuh)
};

}  // namespace dash::rt

#pragma once
// Kernel traces: what one backward main kernel did, per CTA and step, measured on the GPU
// (docs/design.md, "Kernel traces"). A build option (DASH_KERNEL_TRACE, off by default and in
// every benchmark build): when it is off the kernels carry no tracing code at all, and asking for a
// trace is a UserError. Plain types: device code includes this header, and the CLI decodes a
// trace without CUDA.
//
// The raw buffer is int64 slots, one region per CTA (trace_region_slots): a header, then per step
// four stamps of the MMA warpgroups' leader and three of the dQ writer, then three per work item.
// Stamps are the SM's clock64 cycles; the header holds a (%globaltimer, clock64) pair taken when
// the CTA starts and one when it ends, from which the decoder (tools/bench_trace.h) puts every CTA
// on one nanosecond axis.
#include <cstdint>
#include <vector>

#include "dagsim/core/host_device.h"

namespace dash::rt {

#if defined(DASH_KERNEL_TRACE) && DASH_KERNEL_TRACE
inline constexpr bool kKernelTraces = true;
#else
inline constexpr bool kKernelTraces = false;
#endif

/// BwdParams::trace: where a traced launch records (null: it does not).
struct TraceRef {
  std::int64_t* data = nullptr;
  int steps = 0;  ///< step capacity of each CTA's region
  int items = 0;  ///< work-item capacity of each CTA's region
};

/// Header slots of a CTA's region.
enum TraceHeader : int {
  kTraceSm = 0,          ///< %smid
  kTraceStartNs = 1,     ///< %globaltimer at the start
  kTraceStartClock = 2,  ///< clock64 read right after it
  kTraceEndNs = 3,
  kTraceEndClock = 4,
  kTraceHeaderSlots = 8,
};
/// Stamps of a step, in order.
enum TraceStepStamp : int {
  kStepEntry = 0,     ///< the MMA warpgroups start waiting for the step's Q, dO (loads)
  kStepLoaded = 1,    ///< they have them: compute starts
  kStepStaging = 2,   ///< the partial dQ is computed: they wait for a free dQ buffer
  kStepStaged = 3,    ///< it is in the buffer, handed to the writer: compute ends
  kStepTaken = 4,     ///< the dQ writer takes it and waits for the ticket (det)
  kStepAcquired = 5,  ///< its rank has come (atomic: = taken)
  kStepDone = 6,      ///< the add has completed and the ticket is released (atomic: read)
  kStepStamps = 7,
};
/// Stamps of a work item.
enum TraceItemStamp : int {
  kItemWait = 0,   ///< the MMA warpgroups wait for the item's K, V
  kItemStart = 1,  ///< they have them
  kItemEnd = 2,    ///< dK, dV stored (or added): the item is done
  kItemStamps = 3,
};

DASH_HOST_DEVICE constexpr std::int64_t trace_region_slots(int steps, int items) {
  return kTraceHeaderSlots + std::int64_t{kStepStamps} * steps + std::int64_t{kItemStamps} * items;
}
/// Slot of step `n`'s stamp `e` (the leader's four first, then the writer's three) within a region.
DASH_HOST_DEVICE constexpr std::int64_t trace_step_slot(int steps, int n, int e) {
  return e < 4 ? kTraceHeaderSlots + 4 * std::int64_t{n} + e
               : kTraceHeaderSlots + 4 * std::int64_t{steps} + 3 * std::int64_t{n} + (e - 4);
}
DASH_HOST_DEVICE constexpr std::int64_t trace_item_slot(int steps, int k, int e) {
  return kTraceHeaderSlots + std::int64_t{kStepStamps} * steps + std::int64_t{kItemStamps} * k + e;
}

/// What a traced backward recorded: `ctas` regions of trace_region_slots(steps, items) slots
/// (tools/bench_trace.h decodes it against the schedule).
struct RawTrace {
  int ctas = 0;
  int steps = 0;
  int items = 0;
  std::vector<std::int64_t> slots;
};

}  // namespace dash::rt

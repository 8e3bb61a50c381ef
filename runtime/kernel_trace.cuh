#pragma once
// Device side of kernel traces (runtime/kernel_trace.h): each stamp is one clock64 read and one
// store by the thread that owns the event. Every call sits under `if constexpr (kKernelTraces)`,
// so a build without DASH_KERNEL_TRACE carries none of it.
#include <cstdint>

#include "runtime/kernel_trace.h"

namespace dash::rt::trace {

__device__ __forceinline__ std::int64_t clock() { return static_cast<std::int64_t>(clock64()); }

__device__ __forceinline__ std::int64_t global_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return static_cast<std::int64_t>(t);
}

__device__ __forceinline__ std::int64_t* region(TraceRef const& t) {
  return t.data + static_cast<std::int64_t>(blockIdx.x) * trace_region_slots(t.steps, t.items);
}

/// The CTA's start (`end` false) or end pair of %globaltimer and clock64, and at the start its SM.
__device__ __forceinline__ void mark(TraceRef const& t, bool end) {
  if (t.data == nullptr) return;
  std::int64_t* r = region(t);
  std::int64_t const ns = global_ns();
  std::int64_t const cycles = clock();
  if (!end) {
    std::uint32_t sm = 0;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    r[kTraceSm] = sm;
  }
  r[end ? kTraceEndNs : kTraceStartNs] = ns;
  r[end ? kTraceEndClock : kTraceStartClock] = cycles;
}

__device__ __forceinline__ void step(TraceRef const& t, int n, int stamp) {
  if (t.data == nullptr || n >= t.steps) return;
  region(t)[trace_step_slot(t.steps, n, stamp)] = clock();
}

__device__ __forceinline__ void item(TraceRef const& t, int k, int stamp) {
  if (t.data == nullptr || k >= t.items) return;
  region(t)[trace_item_slot(t.steps, k, stamp)] = clock();
}

}  // namespace dash::rt::trace

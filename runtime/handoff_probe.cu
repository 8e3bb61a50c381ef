#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/cuda_check.h"
#include "runtime/handoff_kernel.h"
#include "runtime/ticket.cuh"

namespace dash::rt {
namespace {

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}

/// Ping value of round r to CTA b: odd; its pong is the next even number.
__device__ __forceinline__ int ping_value(int b, int r, int rounds) {
  return 2 * (b * rounds + r) + 1;
}

/// Waits until *ticket == value as ticket::spin_until does (relaxed polls, the clock and the
/// other CTAs' failure read every 64 polls, one acquire once seen); false on a timeout or when
/// another CTA failed.
__device__ __forceinline__ bool wait_for(HandoffProbeState const& s, int value) {
  if (ticket::ld_relaxed(s.ticket) != value) {
    std::uint64_t const start = global_ns();
    for (unsigned polls = 1; ticket::ld_relaxed(s.ticket) != value; ++polls) {
      if (polls % 64 == 0 &&
          (global_ns() - start > kHandoffTimeoutNs || ticket::ld_relaxed(s.failed) != 0)) {
        atomicExch(s.failed, 1);
        return false;
      }
    }
  }
  (void)ticket::ld_acquire(s.ticket);
  return true;
}

__global__ void __launch_bounds__(32)
    handoff_kernel(HandoffProbeState s, int pinger_smid, int rounds) {
  if (threadIdx.x != 0) return;
  int const cta = static_cast<int>(blockIdx.x);
  int const ctas = static_cast<int>(gridDim.x);
  int id;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(id));
  s.smid[cta] = id;
  // Every CTA resident before any waits on another.
  atomicAdd(s.arrived, 1);
  std::uint64_t const start = global_ns();
  while (ticket::ld_acquire(s.arrived) < ctas) {
    if (global_ns() - start > kHandoffTimeoutNs) {
      atomicExch(s.failed, 1);
      return;
    }
  }
  if (pinger_smid < 0) return;  // a launch that only maps CTAs to SMs
  if (id == pinger_smid) {
    long long const c0 = clock64();
    std::uint64_t const t0 = global_ns();
    long long trips[kHandoffMaxRounds];
    for (int b = 0; b < ctas; ++b) {
      if (b == cta) continue;
      for (int r = 0; r < rounds; ++r) {
        int const ping = ping_value(b, r, rounds);
        long long const begin = clock64();
        ticket::st_release(s.ticket, ping);
        if (!wait_for(s, ping + 1)) return;
        trips[r] = clock64() - begin;
      }
      // The (lower) median round trip, halved: insertion sort of at most kHandoffMaxRounds values.
      for (int i = 1; i < rounds; ++i) {
        long long const v = trips[i];
        int j = i - 1;
        for (; j >= 0 && trips[j] > v; --j) trips[j + 1] = trips[j];
        trips[j + 1] = v;
      }
      s.result[b] = trips[(rounds - 1) / 2] / 2;
    }
    s.result[cta] = 0;
    s.clock[0] = clock64() - c0;
    s.clock[1] = static_cast<long long>(global_ns() - t0);
    return;
  }
  // A pong for each of this CTA's rounds, in order.
  for (int r = 0; r < rounds; ++r) {
    int const ping = ping_value(cta, r, rounds);
    if (!wait_for(s, ping)) return;
    ticket::st_release(s.ticket, ping + 1);
  }
}

}  // namespace

void const* handoff_kernel_address() { return reinterpret_cast<void const*>(&handoff_kernel); }

void launch_handoff(HandoffProbeState const& state, int ctas, int pinger_smid, int rounds) {
  handoff_kernel<<<ctas, 32, kHandoffSmem>>>(state, pinger_smid, rounds);
  DASH_CUDA_CHECK_LAUNCH();
}

}  // namespace dash::rt

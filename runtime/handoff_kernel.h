#pragma once
// The kernel of `dash probe` (runtime/handoff_probe.h) and its launch: CUDA only, no formatting
// (nvcc compiles it), so the checks and messages live in handoff_probe.cpp.
#include <cstdint>

#include "dagsim/model/handoff.h"

namespace dash::rt {

/// Device pointers of one probe launch.
struct HandoffProbeState {
  int* arrived;       ///< CTAs that have started (zeroed before each launch)
  int* ticket;        ///< the one ticket word of the ping-pong
  int* failed;        ///< set on a timeout (zeroed before each launch)
  int* smid;          ///< [cta] its SM
  long long* result;  ///< [cta]: one-way cycles from the pinger's SM to its (the pinger's row)
  long long* clock;   ///< [2]: the pinger's clock64 and %globaltimer spans
};

inline constexpr int kHandoffMaxRounds = sim::kMaxHandoffRounds;
/// Enough dynamic shared memory that no SM holds two CTAs: the grid is one CTA per SM.
inline constexpr int kHandoffSmem = 120 * 1024;
/// A wait longer than this ends the probe (the CTAs are not all resident, or a bug).
inline constexpr std::uint64_t kHandoffTimeoutNs = 5'000'000'000ULL;

/// The kernel's address (for the shared-memory opt-in and the occupancy query).
void const* handoff_kernel_address();
/// One launch of `ctas` CTAs (one per SM): with pinger_smid < 0 each CTA only records its SM; else
/// the CTA on SM `pinger_smid` plays `rounds` round trips with every other CTA. Asynchronous on the
/// default stream.
void launch_handoff(HandoffProbeState const& state, int ctas, int pinger_smid, int rounds);

}  // namespace dash::rt

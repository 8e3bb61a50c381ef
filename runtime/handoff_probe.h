#pragma once
// `dash probe` on the GPU: the ticket hand-off latency between every pair of SMs, measured the way
// the kernels hand a ticket on (docs/model.md, "Machine profiles"). One CTA per SM, all resident;
// for each SM in turn its CTA plays ping-pong through one ticket word with every other CTA:
// st.release of the ping, relaxed polls until the pong, as ticket::spin_until polls.
#include "dagsim/model/handoff.h"

namespace dash::rt {

/// `rounds` round trips per pair (1..256), the median kept. Throws UserError when the GPU cannot
/// hold one CTA per SM at once (another process on it) or a wait exceeds a few seconds, CudaError
/// on a CUDA failure.
sim::HandoffMatrix probe_handoff(int rounds);

}  // namespace dash::rt

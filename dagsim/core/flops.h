#pragma once
// The FLOP count behind every TFLOP/s figure (docs/design.md section 6): one definition for `dash bench`
// and the runtime's own benchmark.
#include "dagsim/core/problem.h"

namespace dash::sim {

/// Backward FLOPs = 2.5 x forward, forward = 4 * b * h * d * (visible query-key pairs per head).
/// Visible pairs: s_q * s_k for a full mask, s^2 / 2 for causal with s_q = s_k (the FA convention,
/// which counts the diagonal half), and the exact count of the mask otherwise.
double backward_flops(Problem const& problem);

/// TFLOP/s of `flops` done in `ms` milliseconds (ms > 0).
double tflops(double flops, double ms);

}  // namespace dash::sim

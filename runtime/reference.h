#pragma once
// Reference attention forward + backward, for verification: a CPU one in fp64 for small shapes
// and a naive GPU one in fp32 for large ones. Both can also do "the same math in low precision"
// (every GEMM/softmax output rounded to bf16/fp16, as a plain framework reference in bf16 does),
// whose error against the exact one sets the tolerance of our kernels (FlashAttention's rule).
// Tensors are packed (total_rows, heads, head_dim) fp32 arrays; LSE is [q_heads][total_q].
#include <cstdint>
#include <vector>

#include "dagsim/core/problem.h"
#include "runtime/kernel_params.h"

namespace dash::rt {

struct AttentionInputs {
  std::vector<float> q, k, v, dout;  ///< values representable in the dtype under test
};

struct AttentionOutputs {
  std::vector<float> o, lse, dq, dk, dv;
};

enum class RefPrecision : std::uint8_t {
  kExact,  ///< fp64 on the CPU, fp32 on the GPU, no rounding of intermediates
  kLow,    ///< intermediates and outputs rounded to the dtype
};

AttentionOutputs reference_cpu(sim::Problem const& problem, float scale, AttentionInputs const& in,
                               RefPrecision precision, DType dtype);
AttentionOutputs reference_gpu(sim::Problem const& problem, float scale, AttentionInputs const& in,
                               RefPrecision precision, DType dtype);

/// Host conversions between fp32 and the 16-bit dtypes (round to nearest even).
std::uint16_t to_bits(float x, DType dtype);
float from_bits(std::uint16_t bits, DType dtype);
inline float round_to(float x, DType dtype) { return from_bits(to_bits(x, dtype), dtype); }

}  // namespace dash::rt

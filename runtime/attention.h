#pragma once
// Host API of the CUDA runtime: forward and schedule-driven backward attention on a stream.
//
//   dash::rt::Attention attn(problem, DType::kBf16, 1.f / std::sqrt(head_dim));
//   attn.set_schedule(dash::sim::make_strategy("descending", problem, machine));  // validated
//   attn.forward(tensors, stream);                        // O, LSE
//   attn.backward(tensors, Reduction::kDeterministic, stream);  // dQ, dK, dV
//
// Tensors are (batch, seqlen, heads, head_dim) with strides, as FlashAttention; under varlen
// (problem.seqlens_q/k set) they are (total_tokens, heads, head_dim). LSE is [q_heads][total_q]
// fp32, natural log. Every CUDA call is checked (CudaError); bad input is a dash::UserError.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "runtime/cuda_check.h"
#include "runtime/kernel_params.h"
#include "runtime/kernel_trace.h"
#include "runtime/kernels/family.h"
#include "runtime/registry.h"

namespace dash::rt {

/// How the dQ (and GQA dK/dV) partials are summed.
enum class Reduction : std::uint8_t {
  kDeterministic,  ///< fixed rank order through tickets: bitwise repeatable
  kAtomic,         ///< arrival order, no tickets: the cost-of-determinism baseline
};

/// Which backward main kernel set_schedule picks.
enum class KernelChoice : std::uint8_t {
  kAuto,     ///< a registered specialization of the schedule when one matches, else the generic one
  kGeneric,  ///< always the generic, table-driven kernel: the baseline a specialization must equal
};

struct AttentionTensors {
  TensorRef q, k, v;  ///< inputs
  TensorRef o;        ///< forward output, backward input
  TensorRef dout;     ///< backward input
  TensorRef dq, dk, dv;
  float* lse = nullptr;  ///< [q_heads][total_q], forward output, backward input
};

/// Strides of a contiguous (batch, seqlen, heads, head_dim) tensor, or (total, heads, head_dim).
TensorRef contiguous_tensor(void* data, int seqlen, int heads, int head_dim);

/// The kernel families this binary holds kernels of (registry) that run on the current device, in
/// the order `--kernel auto` prefers them (kAutoPreference): auto takes the first.
std::vector<KernelFamily> runnable_families();

/// Bytes of device workspace the backward pass of `problem` needs (accumulators, tickets,
/// per-row statistics); Attention allocates it itself.
std::size_t backward_workspace_bytes(sim::Problem const& problem);


/// One object holds one backward workspace (accumulators, tickets), so its backwards run one at a
/// time: called from several host threads they take turns, and launched on several streams each
/// waits on the GPU for the one before it (an event recorded after each; not inside a CUDA stream
/// capture, where the captured graph orders them). For backwards that overlap, use one object per
/// stream. set_schedule waits for the last backward to finish and for its own uploads to land, so
/// a backward on any stream, cudaStreamNonBlocking ones included, reads the new tables.
class Attention {
 public:
  /// Checks the problem (head_dim 64/128, tiles of a kernel family: family_has_tiles) and
  /// allocates the workspace on the current device. Throws UserError on an unsupported problem.
  Attention(sim::Problem problem, DType dtype, float softmax_scale);
  ~Attention();
  Attention(Attention&&) noexcept;
  Attention& operator=(Attention&&) noexcept;
  Attention(Attention const&) = delete;
  Attention& operator=(Attention const&) = delete;

  /// Validates the schedule (dash::sim::validate against this device's resident CTA capacity),
  /// uploads its tables and picks the kernel: of `family` (none: the first of runnable_families(),
  /// the fastest family this GPU runs), then kAuto: a registered specialization, else the family's generic kernel;
  /// kGeneric: the generic one. kernel_name() and family() say which. Throws UserError when the
  /// family does not run on this GPU or does not have the problem's tiles.
  void set_schedule(sim::Schedule const& schedule, KernelChoice choice = KernelChoice::kAuto,
                    std::optional<KernelFamily> family = std::nullopt);

  /// How long one ticket wait of a deterministic backward may last (default
  /// kDefaultTicketTimeout, runtime/watchdog.h) before the kernel stops; the CUDA error that
  /// follows is a TicketTimeout naming the wait. Throws UserError unless 1 ms <= limit <= 1 h.
  void set_ticket_timeout(std::chrono::milliseconds limit);
  /// Kernel traces (runtime/kernel_trace.h): while on, every backward's main kernel records what
  /// each CTA did when (a few stamps per step); read_trace returns the last one. UserError in a
  /// build without DASH_KERNEL_TRACE, where the kernels carry no tracing code.
  void set_trace(bool on);
  /// Waits for `stream`, then copies the last traced backward's record. UserError when none ran
  /// since set_schedule.
  [[nodiscard]] RawTrace read_trace(cudaStream_t stream) const;

  void forward(AttentionTensors const& t, cudaStream_t stream) const;
  /// Needs set_schedule first. Reads q, k, v, o, dout, lse; writes dq, dk, dv.
  void backward(AttentionTensors const& t, Reduction reduction, cudaStream_t stream) const;

  [[nodiscard]] sim::Problem const& problem() const;
  [[nodiscard]] std::string kernel_name() const;  ///< empty before set_schedule
  [[nodiscard]] KernelFamily family() const;      ///< the family set_schedule picked
  [[nodiscard]] int grid() const;                 ///< CTAs of the main kernel launch
  [[nodiscard]] int ctas_per_sm() const;           ///< resident main-kernel CTAs per SM
  /// Whether a backward with `reduction` zeroes the fp32 dQ accumulator before the main kernel
  /// (a pass over 4 bytes per Q element): unless the first contribution to every dQ tile stores
  /// (docs/design.md §4). Needs set_schedule first.
  [[nodiscard]] bool zeroes_dq(Reduction reduction) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
  friend struct AttentionTestAccess;  // tests/runtime: corrupts the uploaded tables past validation
};

}  // namespace dash::rt

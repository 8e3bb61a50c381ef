#include "runtime/attention.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/rank_order.h"
#include "dagsim/core/tile_index.h"
#include "dagsim/model/validate.h"
#include "runtime/attention_test_access.h"
#include "runtime/device_buffer.h"
#include "runtime/kernels.h"
#include "runtime/kernels/family_model.h"
#include "runtime/mask_code.h"
#include "runtime/watchdog.h"

namespace dash::rt {
namespace {

struct Sizes {
  std::int64_t total_q = 0;
  std::int64_t total_k = 0;
  std::int64_t rows_padded = 0;
  std::int64_t dq_tiles = 0;
  std::int64_t dkv_tiles = 0;
};

Sizes sizes_of(sim::Problem const& p) {
  Sizes s;
  s.total_q = p.total_q();
  s.total_k = p.total_k();
  s.rows_padded = (s.total_q + p.tile_m - 1) / p.tile_m * p.tile_m + p.tile_m;
  sim::TileIndex const index(p);
  s.dq_tiles = index.num_dq_tiles();
  s.dkv_tiles = p.is_gqa() ? index.num_dkv_tiles() : 0;
  return s;
}

struct WorkspaceLayout {
  std::size_t lse_log2 = 0, dpsum = 0, dq_accum = 0, dk_accum = 0, dv_accum = 0, tickets = 0;
  std::size_t total = 0;
};

std::size_t align_up(std::size_t x) { return (x + 255) / 256 * 256; }

WorkspaceLayout layout_of(sim::Problem const& p) {
  Sizes const s = sizes_of(p);
  auto const d = static_cast<std::size_t>(p.head_dim);
  std::size_t const stats = align_up(static_cast<std::size_t>(s.rows_padded * p.q_heads) * sizeof(float));
  // Row-major (portable family) or tile-major (Hopper family, TileMajorDq): room for either.
  std::size_t const dq = align_up(std::max(static_cast<std::size_t>(s.total_q * p.q_heads) * d,
                                           static_cast<std::size_t>(s.dq_tiles * p.tile_m) * d) *
                                  sizeof(float));
  std::size_t const dkv =
      p.is_gqa() ? align_up(static_cast<std::size_t>(s.total_k * p.kv_heads) * d * sizeof(float)) : 0;
  WorkspaceLayout w;
  w.lse_log2 = 0;
  w.dpsum = stats;
  w.dq_accum = 2 * stats;
  w.dk_accum = w.dq_accum + dq;
  w.dv_accum = w.dk_accum + dkv;
  w.tickets = w.dv_accum + dkv;
  w.total = w.tickets + align_up(static_cast<std::size_t>(s.dq_tiles + s.dkv_tiles + 1) * sizeof(int));
  return w;
}

void check_problem(sim::Problem const& p) {
  sim::validate_problem(p);
  bool head_dim_ok = false;
  bool tiles_ok = false;
  for (KernelFamily f : kAllFamilies) {
    head_dim_ok = head_dim_ok || family_has_head_dim(f, p.head_dim);
    tiles_ok = tiles_ok || family_has_tiles(f, p.head_dim, p.tile_m, p.tile_n);
  }
  if (!head_dim_ok) user_error("head_dim {} is not supported by the CUDA kernels (64 or 128)", p.head_dim);
  if (!tiles_ok) {
    std::vector<std::string> offered;
    for (KernelFamily f : kAllFamilies)
      offered.push_back(fmt::format("{}: {}", family_name(f), family_tiles_text(f, p.head_dim)));
    user_error(
        "the CUDA kernels use these tiles (tile_m x tile_n) at head_dim {}: {}; the problem has "
        "{}x{}",
        p.head_dim, fmt::join(offered, ", "), p.tile_m, p.tile_n);
  }
  // The forward launches one grid row (gridDim.z, at most 65535) per sequence.
  if (p.batch > 65535) user_error("batch {} is more than the CUDA kernels take (65535)", p.batch);
  Sizes const s = sizes_of(p);
  // Element offsets are 64-bit in every kernel, so a tensor may hold more than 2^31 elements; rows
  // and tiles are counted in int (Geometry). The model's limits already keep them below 2^31
  // (docs/model.md); this states where the kernels rely on it.
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (s.total_q > kIntMax || s.total_k > kIntMax || s.dq_tiles + s.dkv_tiles >= kIntMax) {
    user_error("problem too large for the CUDA kernels ({} query rows, {} key rows: at most 2^31 - 1 each)", s.total_q,
               s.total_k);
  }
}

void check_tensor(char const* name, TensorRef const& t) {
  if (t.data == nullptr) user_error("tensor {} is null", name);
  if (reinterpret_cast<std::uintptr_t>(t.data) % 16 != 0) user_error("tensor {} is not 16-byte aligned", name);
  if (t.row_stride % 8 != 0 || t.head_stride % 8 != 0 || t.batch_stride % 8 != 0) {
    user_error("tensor {}: strides must be multiples of 8 elements (16-byte rows)", name);
  }
}

}  // namespace

struct Attention::State {
  sim::Problem problem;
  DType dtype = DType::kBf16;
  Geometry geometry;
  WorkspaceLayout layout;
  DeviceBuffer cu_q, cu_k, dq_tile_base, dkv_tile_base, workspace;
  // Schedule, after set_schedule.
  bool has_schedule = false;
  DeviceBuffer cta_begin, items, steps, item_dkv_rank, zero_rows;
  int zero_row_count = 0;
  bool every_dq_tile_contributed = false;  ///< then the first dQ partial of each tile stores
  ScheduleTables tables;
  BwdKernel kernel;
  KernelFamily family = KernelFamily::kSm80;
  int grid = 0;
  int ctas_per_sm = 0;
  std::unique_ptr<Watchdog> watchdog;  // not movable (registered by address)
  std::chrono::nanoseconds ticket_timeout = kDefaultTicketTimeout;
  // Kernel traces (set_trace): the most steps and items any CTA of the schedule runs, and the
  // buffer every traced backward records into (grid regions of that capacity).
  bool trace_on = false;
  int trace_steps = 0;
  int trace_items = 0;
  DeviceBuffer trace;
  // One workspace: host threads take turns (launch), and each backward waits on the GPU for the
  // one before it, whatever stream that ran on (done, recorded after each).
  std::mutex launch;
  cudaEvent_t done = nullptr;

  State() = default;
  State(State const&) = delete;
  State& operator=(State const&) = delete;
  ~State() {
    if (done != nullptr) cudaEventDestroy(done);
  }
};

TensorRef contiguous_tensor(void* data, int seqlen, int heads, int head_dim) {
  TensorRef t;
  t.data = data;
  t.head_stride = head_dim;
  t.row_stride = std::int64_t{heads} * head_dim;
  t.batch_stride = std::int64_t{seqlen} * heads * head_dim;
  return t;
}

std::vector<KernelFamily> runnable_families() {
  int device = 0;
  int major = 0;
  int minor = 0;
  DASH_CUDA_CHECK(cudaGetDevice(&device));
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  std::vector<BwdKernel> const kernels = registered_bwd_kernels();
  std::vector<KernelFamily> out;
  for (KernelFamily f : kAutoPreference) {
    bool const built =
        std::any_of(kernels.begin(), kernels.end(), [f](BwdKernel const& k) { return k.key.family == f; });
    if (built && family_runs_on(f, major, minor)) out.push_back(f);
  }
  return out;
}

std::size_t backward_workspace_bytes(sim::Problem const& problem) {
  check_problem(problem);
  return layout_of(problem).total;
}

Attention::Attention(sim::Problem problem, DType dtype, float softmax_scale) : state_(std::make_unique<State>()) {
  check_problem(problem);
  if (!(softmax_scale > 0.f) || !std::isfinite(softmax_scale)) {
    user_error("softmax scale must be positive and finite, got {}", softmax_scale);
  }
  State& s = *state_;
  DASH_CUDA_CHECK(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
  s.problem = std::move(problem);
  s.dtype = dtype;
  sim::Problem const& p = s.problem;
  Sizes const sz = sizes_of(p);
  std::vector<int> cu_q(p.batch + 1, 0);
  std::vector<int> cu_k(p.batch + 1, 0);
  int max_q = 0;
  int max_k = 0;
  for (int b = 0; b < p.batch; ++b) {
    cu_q[b + 1] = cu_q[b] + p.len_q(b);
    cu_k[b + 1] = cu_k[b] + p.len_k(b);
    max_q = std::max(max_q, p.len_q(b));
    max_k = std::max(max_k, p.len_k(b));
  }
  sim::TileIndex const index(p);
  std::vector<int> dq_base(p.batch);
  std::vector<int> dkv_base(p.batch);
  for (int b = 0; b < p.batch; ++b) {
    dq_base[b] = index.dq_id(b, 0, 0);
    dkv_base[b] = index.dkv_id(b, 0, 0);
  }
  s.cu_q = upload(cu_q);
  s.cu_k = upload(cu_k);
  s.dq_tile_base = upload(dq_base);
  s.dkv_tile_base = upload(dkv_base);
  s.layout = layout_of(p);
  s.workspace = DeviceBuffer(s.layout.total);
  s.watchdog = std::make_unique<Watchdog>();
  // A cudaMemcpy from pageable memory may return before its DMA lands, and a non-blocking stream
  // does not wait for it: the tables are on the device before any stream can read them.
  DASH_CUDA_CHECK(cudaDeviceSynchronize());

  Geometry& g = s.geometry;
  g.batch = p.batch;
  g.q_heads = p.q_heads;
  g.kv_heads = p.kv_heads;
  g.varlen = p.seqlens_q.empty() ? 0 : 1;
  g.seqlen_q = g.varlen ? max_q : p.seqlen_q;
  g.seqlen_k = g.varlen ? max_k : p.seqlen_k;
  g.head_dim = p.head_dim;
  g.total_q = static_cast<int>(sz.total_q);
  g.total_k = static_cast<int>(sz.total_k);
  g.rows_padded = static_cast<int>(sz.rows_padded);
  g.cu_q = s.cu_q.as<int>();
  g.cu_k = s.cu_k.as<int>();
  g.mask_kind = mask_code(p.mask.kind);
  g.mask_left = p.mask.kind == sim::MaskKind::kWindow ? std::min(p.mask.left, kUnboundedSide) : kUnboundedSide;
  g.mask_right = p.mask.kind == sim::MaskKind::kWindow ? std::min(p.mask.right, kUnboundedSide)
                 : p.mask.kind == sim::MaskKind::kCausal ? 0
                                                         : kUnboundedSide;
  g.scale = softmax_scale;
  g.scale_log2 = softmax_scale * 1.4426950408889634f;
}

Attention::~Attention() = default;
Attention::Attention(Attention&&) noexcept = default;
Attention& Attention::operator=(Attention&&) noexcept = default;

sim::Problem const& Attention::problem() const { return state_->problem; }
std::string Attention::kernel_name() const { return state_->has_schedule ? state_->kernel.name : std::string(); }
int Attention::grid() const { return state_->grid; }
KernelFamily Attention::family() const { return state_->family; }
int Attention::ctas_per_sm() const { return state_->ctas_per_sm; }

bool Attention::zeroes_dq(Reduction reduction) const {
  State const& s = *state_;
  if (!s.has_schedule) user_error("zeroes_dq needs a schedule (set_schedule) first");
  // The first contribution to a dQ tile can store instead of add: no zeroing pass. In rank order
  // (deterministic), or the first to claim the tile where the family's kernel claims.
  bool const first_stores = s.every_dq_tile_contributed &&
                            (reduction == Reduction::kDeterministic || family_traits(s.family).dq_first_claims);
  return !first_stores;
}

int AttentionTestAccess::set_dq_rank(Attention& attn, int step, int rank) {
  Attention::State& s = *attn.state_;
  if (!s.has_schedule || step < 0 || (2 * std::size_t(step) + 2) * sizeof(int) > s.steps.size_bytes()) {
    user_error("set_dq_rank: no step {} in the uploaded table", step);
  }
  int* at = s.steps.as<int>() + 2 * std::size_t(step) + 1;
  int old = 0;
  DASH_CUDA_CHECK(cudaMemcpy(&old, at, sizeof(int), cudaMemcpyDeviceToHost));
  DASH_CUDA_CHECK(cudaMemcpy(at, &rank, sizeof(int), cudaMemcpyHostToDevice));
  return old;
}

void Attention::set_ticket_timeout(std::chrono::milliseconds limit) {
  if (limit < std::chrono::milliseconds(1) || limit > std::chrono::hours(1)) {
    user_error("ticket timeout must be 1 ms to 1 h, got {} ms", limit.count());
  }
  state_->ticket_timeout = limit;
}

void Attention::set_schedule(sim::Schedule const& schedule, KernelChoice choice,
                             std::optional<KernelFamily> family) {
  State& s = *state_;
  std::lock_guard<std::mutex> const turn(s.launch);
  // A backward still running reads the tables about to be replaced.
  DASH_CUDA_CHECK(cudaEventSynchronize(s.done));
  sim::Problem const& p = s.problem;
  int device = 0;
  DASH_CUDA_CHECK(cudaGetDevice(&device));
  int major = 0;
  int minor = 0;
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (!family) {
    // auto: the first family here with the problem's tiles (the sm90 family's 80-row ones are its
    // own).
    family = auto_family(runnable_families(), p.head_dim, p.tile_m, p.tile_n);
  }
  if (!family) user_error("no kernel family runs on this GPU (compute capability {}.{})", major, minor);
  if (!family_runs_on(*family, major, minor)) {
    FamilyTraits const t = family_traits(*family);
    user_error("the {} kernels need compute capability {}{}.{}, this GPU has {}.{}", t.name, t.exact_cc ? "" : ">= ",
               t.min_cc / 10, t.min_cc % 10, major, minor);
  }
  if (!family_has_tiles(*family, p.head_dim, p.tile_m, p.tile_n)) {
    user_error(
        "the {} kernels use {} tiles (tile_m x tile_n) at head_dim {}, the problem has {}x{}",
        family_name(*family), family_tiles_text(*family, p.head_dim), p.head_dim, p.tile_m, p.tile_n);
  }
  KernelKey wanted;
  wanted.family = *family;
  wanted.head_dim = p.head_dim;
  wanted.tile_m = p.tile_m;
  wanted.tile_n = p.tile_n;
  wanted.mask_kind = mask_code(p.mask.kind);
  wanted.dtype = s.dtype;
  // Hash 0 matches no specialization (the registry keys them by non-zero hashes): generic.
  wanted.schedule_hash = choice == KernelChoice::kGeneric ? 0 : sim::schedule_hash(schedule);
  BwdKernel kernel = find_bwd_kernel(wanted);

  int sms = 0;
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  int const per_sm = kernel.ctas_per_sm();
  if (per_sm < 1) user_error("the backward kernel does not fit on this GPU");
  // A persistent grid must be resident all at once: the capacity is the machine the schedule is
  // validated against. Dynamic schedules wait only on earlier-launched CTAs (validated), so any
  // capacity >= 1 works.
  sim::validate(p, sim::machine_with_sms(sms * per_sm), schedule);
  if (schedule.ctas.empty()) user_error("schedule has no CTAs");

  sim::TileIndex const index(p);
  // rank_of[dq_off[id] + kv] = rank of kv tile `kv` in dQ tile `id`'s order.
  std::vector<std::int64_t> const dq_off = index.dq_kv_offsets();
  std::vector<int> rank_of(static_cast<std::size_t>(dq_off.back()), -1);
  for (std::size_t id = 0; id < schedule.dq_order.size(); ++id) {
    sim::scatter_ranks(schedule.dq_order[id], 0,
                       std::span<int>(rank_of).subspan(static_cast<std::size_t>(dq_off[id]),
                                                       static_cast<std::size_t>(dq_off[id + 1] - dq_off[id])));
  }
  int const group = p.group_size();
  std::vector<int> cta_begin;
  std::vector<int> items;
  std::vector<int> steps;
  std::vector<int> dkv_rank;
  std::vector<char> covered(static_cast<std::size_t>(index.num_items()), 0);
  int step_count = 0;
  for (auto const& cta : schedule.ctas) {
    cta_begin.push_back(static_cast<int>(items.size() / 4));
    for (auto const& item : cta.items) {
      items.insert(items.end(), {item.batch, item.head, item.kv_tile, step_count});
      covered[index.item_id(item.batch, item.head, item.kv_tile)] = 1;
      for (int i : item.q_order) {
        int const id = index.dq_id(item.batch, item.head, i);
        int const rank = rank_of[dq_off[id] + item.kv_tile];
        DASH_ASSERT(rank >= 0);  // validate() guarantees every step has a rank
        steps.push_back(i);
        steps.push_back(rank);
        ++step_count;
      }
      int rank = 0;
      if (p.is_gqa()) {
        auto const& order = schedule.dkv_order[index.dkv_id(item.batch, item.head / group, item.kv_tile)];
        rank = static_cast<int>(std::find(order.begin(), order.end(), item.head) - order.begin());
        DASH_ASSERT(rank < static_cast<int>(order.size()));
      }
      dkv_rank.push_back(rank);
    }
  }
  cta_begin.push_back(static_cast<int>(items.size() / 4));
  items.insert(items.end(), {0, 0, 0, step_count});  // sentinel: the last item's step end
  // KV tiles with no work item (nothing sees them) still need zero gradients.
  std::vector<int> zero_rows;
  if (!p.is_gqa()) {
    for (int id = 0; id < index.num_items(); ++id) {
      if (covered[id] != 0) continue;
      sim::ItemKey const key = index.item_key(id);
      int const row0 = key.tile * p.tile_n;
      zero_rows.insert(zero_rows.end(), {key.batch, key.head, row0, std::min(row0 + p.tile_n, p.len_k(key.batch))});
    }
  }

  // Backwards launched with the previous tables may still read them: they finish before the
  // tables are freed.
  DASH_CUDA_CHECK(cudaDeviceSynchronize());
  s.cta_begin = upload(cta_begin);
  s.items = upload(items);
  s.steps = upload(steps);
  s.item_dkv_rank = upload(dkv_rank);
  s.zero_rows = upload(zero_rows);
  s.zero_row_count = static_cast<int>(zero_rows.size() / 4);
  DASH_CUDA_CHECK(cudaDeviceSynchronize());  // as in the constructor: uploaded before any stream reads
  // Q tiles that see no key (causal with seqlen_q > seqlen_k, windows) have no contributor: their
  // dQ must come from the preprocess's zeroing.
  s.every_dq_tile_contributed =
      std::all_of(schedule.dq_order.begin(), schedule.dq_order.end(),
                  [](std::vector<int> const& order) { return !order.empty(); });
  s.tables.cta_begin = s.cta_begin.as<int>();
  s.tables.items = s.items.as<int>();
  s.tables.steps = s.steps.as<int>();
  s.tables.item_dkv_rank = s.item_dkv_rank.as<int>();
  s.tables.dq_tile_base = s.dq_tile_base.as<int>();
  s.tables.dkv_tile_base = s.dkv_tile_base.as<int>();
  s.tables.num_ctas = static_cast<int>(schedule.ctas.size());
  s.kernel = std::move(kernel);
  s.family = *family;
  s.grid = static_cast<int>(schedule.ctas.size());
  s.ctas_per_sm = per_sm;
  s.trace_steps = 0;
  s.trace_items = 0;
  for (auto const& cta : schedule.ctas) {
    std::int64_t cta_steps = 0;
    for (auto const& item : cta.items) cta_steps += static_cast<std::int64_t>(item.q_order.size());
    s.trace_steps = std::max(s.trace_steps, static_cast<int>(cta_steps));
    s.trace_items = std::max(s.trace_items, static_cast<int>(cta.items.size()));
  }
  s.trace = DeviceBuffer();
  s.has_schedule = true;
}

void Attention::set_trace(bool on) {
  if (on && !kKernelTraces) {
    user_error("this build records no kernel traces (configure with -DDASH_KERNEL_TRACE=ON)");
  }
  state_->trace_on = on;
}

RawTrace Attention::read_trace(cudaStream_t stream) const {
  State const& s = *state_;
  if (s.trace.size_bytes() == 0)
    user_error("no traced backward has run since the last set_schedule");
  DASH_CUDA_CHECK(cudaStreamSynchronize(stream));
  RawTrace out;
  out.ctas = s.grid;
  out.steps = s.trace_steps;
  out.items = s.trace_items;
  out.slots.resize(s.trace.size_bytes() / sizeof(std::int64_t));
  DASH_CUDA_CHECK(cudaMemcpy(out.slots.data(), s.trace.as<std::int64_t>(), s.trace.size_bytes(),
                             cudaMemcpyDeviceToHost));
  return out;
}

void Attention::forward(AttentionTensors const& t, cudaStream_t stream) const {
  check_tensor("q", t.q);
  check_tensor("k", t.k);
  check_tensor("v", t.v);
  check_tensor("o", t.o);
  if (t.lse == nullptr) user_error("tensor lse is null");
  FwdParams p;
  p.g = state_->geometry;
  p.q = t.q;
  p.k = t.k;
  p.v = t.v;
  p.o = t.o;
  p.lse = t.lse;
  launch_forward(p, state_->dtype, stream);
}

void Attention::backward(AttentionTensors const& t, Reduction reduction, cudaStream_t stream) const {
  State& w = *state_;
  State const& s = w;
  std::lock_guard<std::mutex> const turn(w.launch);
  if (!s.has_schedule) user_error("backward needs a schedule (set_schedule) first");
  for (auto const& [name, ref] : {std::pair{"q", &t.q}, {"k", &t.k}, {"v", &t.v}, {"o", &t.o}, {"dout", &t.dout},
                                  {"dq", &t.dq}, {"dk", &t.dk}, {"dv", &t.dv}}) {
    check_tensor(name, *ref);
  }
  if (t.lse == nullptr) user_error("tensor lse is null");
  // The workspace is the previous backward's until it has finished, on whichever stream. Inside a
  // stream capture the captured graph orders the work: no wait on an event recorded outside it.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  DASH_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  bool const capturing = capture != cudaStreamCaptureStatusNone;
  if (!capturing) DASH_CUDA_CHECK(cudaStreamWaitEvent(stream, s.done, 0));
  auto* base = s.workspace.as<unsigned char>();
  bool const gqa = s.problem.is_gqa();
  Sizes const sz = sizes_of(s.problem);
  auto* tickets = reinterpret_cast<int*>(base + s.layout.tickets);

  PreParams pre;
  pre.g = s.geometry;
  pre.o = t.o;
  pre.dout = t.dout;
  pre.lse = t.lse;
  pre.lse_log2 = reinterpret_cast<float*>(base + s.layout.lse_log2);
  pre.dpsum = reinterpret_cast<float*>(base + s.layout.dpsum);
  pre.dq_accum = reinterpret_cast<float*>(base + s.layout.dq_accum);
  pre.dk_accum = gqa ? reinterpret_cast<float*>(base + s.layout.dk_accum) : nullptr;
  pre.dv_accum = gqa ? reinterpret_cast<float*>(base + s.layout.dv_accum) : nullptr;
  pre.tickets = tickets;
  pre.num_tickets = static_cast<int>(sz.dq_tiles + sz.dkv_tiles);
  bool const deterministic = reduction == Reduction::kDeterministic;
  bool const first_stores = !zeroes_dq(reduction);
  pre.zero_dq = first_stores ? 0 : 1;
  bool const tile_major = family_traits(s.family).dq_tile_major;
  if (tile_major) pre.dq_tile_floats = sz.dq_tiles * s.problem.tile_m * s.problem.head_dim;
  launch_preprocess(pre, s.dtype, stream);
  if (s.zero_row_count > 0) {
    launch_zero_rows(s.geometry, t.dk, t.dv, s.zero_rows.as<int>(), s.zero_row_count, s.dtype, stream);
  }

  BwdParams p;
  p.g = s.geometry;
  p.q = t.q;
  p.k = t.k;
  p.v = t.v;
  p.dout = t.dout;
  p.dk = t.dk;
  p.dv = t.dv;
  p.lse_log2 = pre.lse_log2;
  p.dpsum = pre.dpsum;
  p.dq_accum = pre.dq_accum;
  p.dk_accum = pre.dk_accum;
  p.dv_accum = pre.dv_accum;
  p.dq_ticket = tickets;
  p.dkv_ticket = tickets + sz.dq_tiles;
  p.deterministic = deterministic ? 1 : 0;
  p.dq_first_stores = first_stores ? 1 : 0;
  p.tables = s.tables;
  p.watchdog = s.watchdog->view(s.ticket_timeout);
  if (s.trace_on) {
    std::size_t const bytes =
        static_cast<std::size_t>(s.grid) *
        static_cast<std::size_t>(trace_region_slots(s.trace_steps, s.trace_items)) *
        sizeof(std::int64_t);
    if (w.trace.size_bytes() != bytes) w.trace = DeviceBuffer(bytes);
    DASH_CUDA_CHECK(cudaMemsetAsync(w.trace.as<std::int64_t>(), 0, bytes, stream));
    p.trace = TraceRef{w.trace.as<std::int64_t>(), s.trace_steps, s.trace_items};
  }
  s.kernel.launch(p, s.grid, stream);

  PostParams post;
  post.g = s.geometry;
  post.dq = t.dq;
  post.dk = t.dk;
  post.dv = t.dv;
  post.dq_accum = pre.dq_accum;
  if (tile_major) post.dq_layout = TileMajorDq{s.problem.tile_m, s.tables.dq_tile_base};
  post.dk_accum = pre.dk_accum;
  post.dv_accum = pre.dv_accum;
  launch_postprocess(post, s.dtype, stream);
  if (!capturing) DASH_CUDA_CHECK(cudaEventRecord(s.done, stream));
}

}  // namespace dash::rt

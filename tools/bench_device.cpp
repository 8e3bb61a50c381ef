#include "tools/bench_device.h"

#include "dagsim/core/error.h"

#if DASH_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "dagsim/core/rng.h"
#include "runtime/attention.h"
#include "runtime/cuda_check.h"
#include "runtime/device_buffer.h"
#endif

namespace dash::cli {

#if DASH_HAVE_CUDA
namespace {

/// bf16 bits of x, round to nearest even (x is finite and small here).
std::uint16_t bf16_bits(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Beyond this many sets the rotation no longer matters for tiny problems; the count is reported.
constexpr std::size_t kMaxInputSets = 512;

rt::Reduction reduction_of(BenchMode mode) {
  return mode == BenchMode::kDet ? rt::Reduction::kDeterministic : rt::Reduction::kAtomic;
}

}  // namespace

struct BackwardTimer::State {
  DeviceInfo device;
  std::uint64_t seed = 0;
  cudaStream_t stream = nullptr;
  // Every input set: q, k, v, o, dout (bf16) and lse (fp32), sliced out of one block.
  std::size_t elems_q = 0;
  std::size_t elems_k = 0;
  std::size_t lse_floats = 0;
  std::size_t set_stride = 0;  ///< bytes
  std::size_t sets = 0;
  rt::DeviceBuffer inputs;
  rt::DeviceBuffer outputs;  ///< dq, dk, dv: shared by every set, only written
  std::optional<rt::Attention> attention;
  sim::Problem problem;
  std::size_t cursor = 0;  ///< next set; carried across calls so consecutive calls never share one

  /// The tensors of the next input set in rotation.
  rt::AttentionTensors next_tensors() { return tensors(cursor++ % sets); }

  [[nodiscard]] std::size_t off_k() const { return align_up(elems_q * 2); }
  [[nodiscard]] std::size_t off_v() const { return off_k() + align_up(elems_k * 2); }
  [[nodiscard]] std::size_t off_o() const { return off_v() + align_up(elems_k * 2); }
  [[nodiscard]] std::size_t off_dout() const { return off_o() + align_up(elems_q * 2); }
  [[nodiscard]] std::size_t off_lse() const { return off_dout() + align_up(elems_q * 2); }
  [[nodiscard]] std::size_t stride() const { return off_lse() + align_up(lse_floats * 4); }

  [[nodiscard]] rt::AttentionTensors tensors(std::size_t set) const {
    sim::Problem const& p = problem;
    unsigned char* base = inputs.as<unsigned char>() + set * set_stride;
    unsigned char* out = outputs.as<unsigned char>();
    auto q_like = [&](unsigned char* at) {
      return rt::contiguous_tensor(at, p.seqlen_q, p.q_heads, p.head_dim);
    };
    auto k_like = [&](unsigned char* at) {
      return rt::contiguous_tensor(at, p.seqlen_k, p.kv_heads, p.head_dim);
    };
    rt::AttentionTensors t;
    t.q = q_like(base);
    t.k = k_like(base + off_k());
    t.v = k_like(base + off_v());
    t.o = q_like(base + off_o());
    t.dout = q_like(base + off_dout());
    t.lse = reinterpret_cast<float*>(base + off_lse());
    t.dq = q_like(out);
    t.dk = k_like(out + align_up(elems_q * 2));
    t.dv = k_like(out + align_up(elems_q * 2) + align_up(elems_k * 2));
    return t;
  }

  // Uniform bf16 values in [-1, 1), from our own generator: never zeros, never the same twice.
  void fill_inputs() {
    constexpr std::size_t kChunk = std::size_t{1} << 24;
    std::vector<std::uint16_t> host;
    sim::Rng rng(seed);
    for (std::size_t s = 0; s < sets; ++s) {
      unsigned char* base = inputs.as<unsigned char>() + s * set_stride;
      for (auto [offset, count] : {std::pair{std::size_t{0}, elems_q},
                                   {off_k(), elems_k},
                                   {off_v(), elems_k},
                                   {off_dout(), elems_q}}) {
        for (std::size_t done = 0; done < count; done += kChunk) {
          std::size_t const n = std::min(kChunk, count - done);
          host.resize(n);
          for (std::size_t i = 0; i < n; i += 4) {
            std::uint64_t bits = rng.next();
            for (std::size_t k = i; k < std::min(n, i + 4); ++k, bits >>= 16) {
              float const x = static_cast<float>(bits & 0xffffu) / 32768.0f - 1.0f;
              host[k] = bf16_bits(x);
            }
          }
          DASH_CUDA_CHECK(
              cudaMemcpy(base + offset + done * 2, host.data(), n * 2, cudaMemcpyHostToDevice));
        }
      }
    }
  }
};

DeviceInfo query_device() {
  int count = 0;
  cudaError_t const err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    user_error("bench needs a CUDA GPU and none is visible ({})",
               err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
  }
  cudaDeviceProp prop{};
  DASH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 8) {
    user_error("bench needs an sm_80 or newer GPU; device 0 ({}) is sm_{}{}", prop.name, prop.major,
               prop.minor);
  }
  DeviceInfo info;
  info.name = prop.name;
  info.sms = prop.multiProcessorCount;
  info.l2_bytes = prop.l2CacheSize;
  info.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  int clock_khz = 0;
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  info.clock_khz = clock_khz;
  info.planning_family = rt::planning_family(rt::runnable_families());
  return info;
}

BackwardTimer::BackwardTimer(DeviceInfo device, std::uint64_t seed)
    : state_(std::make_unique<State>()) {
  state_->device = std::move(device);
  state_->seed = seed;
  DASH_CUDA_CHECK(cudaSetDevice(0));
  DASH_CUDA_CHECK(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking));
}

BackwardTimer::~BackwardTimer() {
  if (state_ && state_->stream != nullptr) cudaStreamDestroy(state_->stream);
}

void BackwardTimer::set_problem(sim::Problem const& problem) {
  State& s = *state_;
  if (!problem.seqlens_q.empty())
    user_error("bench runs fixed-length batches only (no --seqlens varlen)");
  s.attention.reset();
  s.attention.emplace(problem, rt::DType::kBf16,
                      1.0f / std::sqrt(static_cast<float>(problem.head_dim)));
  auto const rows_q =
      static_cast<std::size_t>(problem.batch) * static_cast<std::size_t>(problem.seqlen_q);
  auto const rows_k =
      static_cast<std::size_t>(problem.batch) * static_cast<std::size_t>(problem.seqlen_k);
  std::size_t const elems_q = rows_q * static_cast<std::size_t>(problem.q_heads * problem.head_dim);
  std::size_t const elems_k =
      rows_k * static_cast<std::size_t>(problem.kv_heads * problem.head_dim);
  std::size_t const lse_floats = rows_q * static_cast<std::size_t>(problem.q_heads);
  s.problem = problem;
  if (elems_q != s.elems_q || elems_k != s.elems_k || lse_floats != s.lse_floats) {
    s.inputs = rt::DeviceBuffer();
    s.outputs = rt::DeviceBuffer();
    s.elems_q = elems_q;
    s.elems_k = elems_k;
    s.lse_floats = lse_floats;
    s.set_stride = s.stride();
    // Sets enough that the ones read since a set's last use exceed L2 (plus one: the set itself).
    auto const l2 = static_cast<std::size_t>(std::max<std::int64_t>(s.device.l2_bytes, 1));
    s.sets = std::clamp<std::size_t>(2 + l2 / s.set_stride, 2, kMaxInputSets);
    // Never more than half the device memory for inputs; at least two sets always.
    auto const budget = static_cast<std::size_t>(s.device.memory_bytes / 2);
    s.sets = std::max<std::size_t>(2, std::min(s.sets, budget / s.set_stride));
    std::size_t const outputs = align_up(elems_q * 2) + 2 * align_up(elems_k * 2);
    if ((s.sets * s.set_stride + outputs) >
        static_cast<std::size_t>(s.device.memory_bytes) * 9 / 10) {
      user_error("bench: {} input sets of {} MiB do not fit in the GPU's memory", s.sets,
                 s.set_stride >> 20);
    }
    s.inputs = rt::DeviceBuffer(s.sets * s.set_stride);
    s.outputs = rt::DeviceBuffer(outputs);
    s.fill_inputs();
  }
  for (std::size_t set = 0; set < s.sets; ++set) s.attention->forward(s.tensors(set), s.stream);
  DASH_CUDA_CHECK(cudaStreamSynchronize(s.stream));
}

void BackwardTimer::set_schedule(sim::Schedule const& schedule, std::optional<rt::KernelFamily> family,
                                 bool generic) {
  DASH_ASSERT(state_->attention.has_value());
  state_->attention->set_schedule(schedule, generic ? rt::KernelChoice::kGeneric : rt::KernelChoice::kAuto,
                                  family);
}

std::string BackwardTimer::kernel_name() const {
  DASH_ASSERT(state_->attention.has_value());
  return state_->attention->kernel_name();
}

Timing BackwardTimer::time(BenchMode mode, TimingPlan plan) {
  State& s = *state_;
  DASH_ASSERT(s.attention.has_value() && plan.iters >= 1 && plan.warmup >= 0);
  rt::Reduction const reduction = reduction_of(mode);
  for (int w = 0; w < plan.warmup; ++w) s.attention->backward(s.next_tensors(), reduction, s.stream);

  // Events are destroyed however this scope is left.
  std::vector<cudaEvent_t> events(static_cast<std::size_t>(2 * plan.iters), nullptr);
  struct EventGuard {
    std::vector<cudaEvent_t>& list;
    ~EventGuard() {
      for (auto e : list) {
        if (e != nullptr) cudaEventDestroy(e);
      }
    }
  } const guard{events};
  for (auto& e : events) DASH_CUDA_CHECK(cudaEventCreate(&e));
  for (std::size_t it = 0; it < events.size(); it += 2) {
    rt::AttentionTensors const t = s.next_tensors();
    DASH_CUDA_CHECK(cudaEventRecord(events[it], s.stream));
    s.attention->backward(t, reduction, s.stream);
    DASH_CUDA_CHECK(cudaEventRecord(events[it + 1], s.stream));
  }
  DASH_CUDA_CHECK(cudaEventSynchronize(events.back()));
  Timing timing;
  for (std::size_t it = 0; it < events.size(); it += 2) {
    float ms = 0.0f;
    DASH_CUDA_CHECK(cudaEventElapsedTime(&ms, events[it], events[it + 1]));
    timing.ms.push_back(static_cast<double>(ms));
  }
  timing.kernel = s.attention->kernel_name();
  timing.grid = s.attention->grid();
  timing.input_sets = static_cast<int>(s.sets);
  timing.dq_zeroed = s.attention->zeroes_dq(reduction);
  return timing;
}

rt::RawTrace BackwardTimer::trace(BenchMode mode) {
  State& s = *state_;
  DASH_ASSERT(s.attention.has_value());
  rt::Reduction const reduction = reduction_of(mode);
  s.attention->set_trace(true);  // UserError in a build without kernel traces
  // Switched off again however this call is left, so later timed calls are not traced.
  struct Off {
    rt::Attention& a;
    ~Off() { a.set_trace(false); }
  } const off{*s.attention};
  s.attention->backward(s.next_tensors(), reduction, s.stream);
  return s.attention->read_trace(s.stream);
}

#else  // built without CUDA

namespace {
[[noreturn]] void no_cuda() {
  user_error(
      "bench needs a GPU and the CUDA runtime; this dash was built without CUDA (no nvcc at "
      "configure time)");
}
}  // namespace

struct BackwardTimer::State {};

DeviceInfo query_device() { no_cuda(); }
BackwardTimer::BackwardTimer(DeviceInfo, std::uint64_t) { no_cuda(); }
BackwardTimer::~BackwardTimer() = default;
void BackwardTimer::set_problem(sim::Problem const&) { no_cuda(); }
void BackwardTimer::set_schedule(sim::Schedule const&, std::optional<rt::KernelFamily>, bool) { no_cuda(); }
std::string BackwardTimer::kernel_name() const { no_cuda(); }
Timing BackwardTimer::time(BenchMode, TimingPlan) { no_cuda(); }
rt::RawTrace BackwardTimer::trace(BenchMode) { no_cuda(); }

#endif

}  // namespace dash::cli

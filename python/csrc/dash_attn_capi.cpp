// The dash_attn C ABI (dash_attn_capi.h) over dash::sim (schedules) and dash::rt (kernels).
// Nothing here computes attention or schedules itself: it parses the boundary's JSON, calls the
// project's libraries and turns every exception into a status and a message.
#include "python/csrc/dash_attn_capi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/mask.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/cost_model.h"
#include "dagsim/model/named_run.h"
#include "dagsim/model/validate.h"
#include "dagsim/search/search.h"
#include "runtime/kernels/family.h"
#include "runtime/kernels/family_model.h"

#if DASH_ATTN_CUDA
#include <cuda_runtime_api.h>

#include "runtime/attention.h"
#include "runtime/cuda_check.h"
#include "runtime/watchdog.h"
#endif

namespace {

using nlohmann::json;
namespace sim = dash::sim;
namespace rt = dash::rt;

constexpr int kAbiVersion = 2;

thread_local std::string last_error;

// Runs `body`, mapping every exception to a status: nothing may unwind into ctypes.
template <typename F>
int guarded(F&& body) {
  try {
    body();
    last_error.clear();
    return DASH_ATTN_OK;
  } catch (dash::UserError const& e) {
    last_error = e.what();
    return DASH_ATTN_USER_ERROR;
#if DASH_ATTN_CUDA
  } catch (rt::CudaError const& e) {
    last_error = e.what();
    return DASH_ATTN_CUDA_ERROR;
#endif
  } catch (json::exception const& e) {
    // Our Python side writes the JSON; a malformed one is a bad argument, not a crash.
    last_error = fmt::format("malformed JSON argument: {}", e.what());
    return DASH_ATTN_USER_ERROR;
  } catch (std::bad_alloc const&) {
    last_error = "out of host memory";
    return DASH_ATTN_INTERNAL;
  } catch (std::exception const& e) {
    last_error = e.what();
    return DASH_ATTN_INTERNAL;
  } catch (...) {
    last_error = "unknown C++ exception";
    return DASH_ATTN_INTERNAL;
  }
}

char* copy_out(std::string const& text) {
  auto* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

void require_out(void const* out) {
  if (out == nullptr) dash::user_error("null output pointer");
}

json parse(char const* text, char const* what) {
  if (text == nullptr) dash::user_error("{} is null", what);
  return json::parse(text);
}

int int_field(json const& j, char const* key) {
  if (!j.contains(key) || !j.at(key).is_number_integer()) {
    dash::user_error("problem field '{}' is missing or not an integer", key);
  }
  return j.at(key).get<int>();
}

rt::KernelFamily family_of(json const& spec) {
  std::string const name = spec.value("family", std::string(rt::family_name(rt::kDefaultFamily)));
  auto const family = rt::parse_family(name);
  if (!family) dash::user_error("unknown kernel family '{}': expected sm80 or sm90", name);
  return *family;
}

// The problem with the family's tiles; validated (sim::validate_problem).
sim::Problem problem_of(json const& j, rt::KernelFamily family) {
  sim::Problem p;
  p.batch = int_field(j, "batch");
  p.q_heads = int_field(j, "q_heads");
  p.kv_heads = int_field(j, "kv_heads");
  p.seqlen_q = int_field(j, "seqlen_q");
  p.seqlen_k = int_field(j, "seqlen_k");
  p.head_dim = int_field(j, "head_dim");
  if (!rt::family_has_head_dim(family, p.head_dim)) {
    dash::user_error("head_dim {} is not supported by the {} kernels (64 or 128)", p.head_dim,
                     rt::family_name(family));
  }
  p.mask = sim::parse_mask(j.value("mask", std::string("full")));
  p.tile_m = rt::default_tile_m(family, p.head_dim, p.mask);
  p.tile_n = rt::family_tile_n(family);
  if (j.contains("seqlens_q")) p.seqlens_q = j.at("seqlens_q").get<std::vector<int>>();
  if (j.contains("seqlens_k")) p.seqlens_k = j.at("seqlens_k").get<std::vector<int>>();
  sim::validate_problem(p);
  return p;
}

// Equal shapes and tiles; under varlen the fixed lengths are not part of the problem.
bool same_problem(sim::Problem a, sim::Problem b) {
  if (!a.seqlens_q.empty()) a.seqlen_q = a.seqlen_k = 0;
  if (!b.seqlens_q.empty()) b.seqlen_q = b.seqlen_k = 0;
  return a == b;
}

std::string describe(sim::Problem const& p) {
  return fmt::format("batch {}, heads {}/{}, seqlen {}/{}{}, head_dim {}, tiles {}x{}, {}", p.batch,
                     p.q_heads, p.kv_heads, p.seqlen_q, p.seqlen_k,
                     p.seqlens_q.empty() ? "" : " (varlen)", p.head_dim, p.tile_m, p.tile_n,
                     sim::to_string(p.mask));
}

sim::CostModel cost_of(json const& spec, sim::Problem const& p, rt::KernelFamily family) {
  std::string const model = spec.value("model", std::string("default"));
  sim::CostModel const base = rt::family_default_model(p, family);
  if (model == "default") return base;
  if (model == "paper") return sim::paper_model(base.compute, base.reduce);
  dash::user_error("unknown cost model '{}': expected default or paper", model);
}

sim::Machine machine_of(json const& spec) {
  if (!spec.contains("machine")) dash::user_error("spec has no machine");
  json const& m = spec.at("machine");
  sim::Machine machine = sim::machine_with_sms(m.at("sms").get<int>());
  if (m.contains("name")) machine.name = m.at("name").get<std::string>();
  return machine;
}

#if DASH_ATTN_CUDA
// Switches to `device` for one call and back: the caller's current device (PyTorch's) is left as
// it was.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    DASH_CUDA_CHECK(cudaGetDevice(&previous_));
    if (device != previous_) DASH_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
  }
  DeviceGuard(DeviceGuard const&) = delete;
  DeviceGuard& operator=(DeviceGuard const&) = delete;

 private:
  int previous_ = 0;
};

struct Handle {
  int device = 0;
  rt::Attention attention;
};

rt::TensorRef ref_of(DashAttnTensor const& t) {
  return {t.data, t.batch_stride, t.row_stride, t.head_stride};
}

rt::AttentionTensors tensors_of(DashAttnTensors const* t) {
  if (t == nullptr) dash::user_error("tensors are null");
  rt::AttentionTensors out;
  out.q = ref_of(t->q);
  out.k = ref_of(t->k);
  out.v = ref_of(t->v);
  out.o = ref_of(t->o);
  out.dout = ref_of(t->dout);
  out.dq = ref_of(t->dq);
  out.dk = ref_of(t->dk);
  out.dv = ref_of(t->dv);
  out.lse = t->lse;
  return out;
}

Handle& handle_of(void* handle) {
  if (handle == nullptr) dash::user_error("attention handle is null");
  return *static_cast<Handle*>(handle);
}
#endif

}  // namespace

extern "C" {

int dash_attn_abi_version(void) { return kAbiVersion; }

int dash_attn_has_cuda(void) { return DASH_ATTN_CUDA ? 1 : 0; }

char const* dash_attn_last_error(void) { return last_error.c_str(); }

void dash_attn_free(char* text) { std::free(text); }

int dash_attn_expired_ticket_wait(char** out) {
  return guarded([&] {
    require_out(out);
#if DASH_ATTN_CUDA
    *out = copy_out(rt::expired_wait_report());
#else
    *out = copy_out("");  // no kernels, no ticket waits
#endif
  });
}

int dash_attn_strategy_names(char** out) {
  return guarded([&] {
    require_out(out);
    *out = copy_out(fmt::format("{}", fmt::join(sim::strategy_names(), ",")));
  });
}

int dash_attn_make_schedule(char const* spec_text, char** out) {
  return guarded([&] {
    require_out(out);
    json const spec = parse(spec_text, "spec");
    rt::KernelFamily const family = family_of(spec);
    sim::Problem const problem = problem_of(spec.at("problem"), family);
    sim::Machine const machine = machine_of(spec);
    sim::CostModel const cost = cost_of(spec, problem, family);
    std::string const strategy = spec.value("strategy", std::string("search"));
    json result;
    sim::Schedule schedule;
    if (strategy == "search") {
      sim::SearchOptions options;
      // A count of evaluations makes the schedule, and so the deterministic mode's summation order,
      // a function of the spec alone; the wall-clock budget only guards (docs/design.md section 3).
      options.max_evaluations = spec.value("evaluations", std::int64_t{256});
      options.budget_ms = spec.value("budget_ms", std::int64_t{60'000});
      options.threads = std::clamp(spec.value("threads", 1), 1, 64);
      options.max_live_bytes = spec.value("live_cap_bytes", sim::kDefaultLiveCap);
      if (options.max_evaluations < 1) dash::user_error("evaluations must be >= 1");
      sim::SearchResult r = sim::search(problem, machine, cost, options);
      result["makespan"] = r.makespan;
      result["predicted"] = r.predicted;
      result["lower_bound"] = r.lower_bound;
      result["local_evaluations"] = r.stats.local_evaluations;
      result["optimal"] = r.optimal;
      // Whether the wall-clock guard, not the evaluation count, ended the search.
      result["budget_hit"] = !r.optimal && r.stats.local_evaluations < options.max_evaluations &&
                             r.elapsed_ms >= static_cast<double>(options.budget_ms);
      schedule = std::move(r.schedule);
    } else {
      sim::NamedRun run = strategy == "fastest-named"
                              ? sim::fastest_named(problem, machine, cost, sim::LaunchModel::kPersistent)
                              : sim::run_named(strategy, problem, machine, cost, sim::LaunchModel::kPersistent);
      if (!run.ran()) dash::user_error("strategy '{}' refused this problem: {}", strategy, run.refused);
      result["makespan"] = run.result->makespan;
      result["predicted"] = run.result->predicted();
      schedule = std::move(run.schedule);
    }
    sim::validate(problem, machine, schedule);
    result["document"] = json::parse(sim::to_json(sim::ScheduleDocument{problem, machine, schedule}));
    *out = copy_out(result.dump());
  });
}

int dash_attn_check_schedule(char const* spec_text, char const* document, char** out) {
  return guarded([&] {
    require_out(out);
    json const spec = parse(spec_text, "spec");
    sim::Problem const problem = problem_of(spec.at("problem"), family_of(spec));
    if (document == nullptr) dash::user_error("schedule document is null");
    sim::ScheduleDocument const doc = sim::schedule_from_json(document);
    if (!same_problem(doc.problem, problem)) {
      dash::user_error("the schedule is for {}, but the call is {}", describe(doc.problem),
                       describe(problem));
    }
    sim::validate(doc.problem, doc.machine, doc.schedule);
    json result = {{"sms", doc.machine.sms}, {"strategy", doc.schedule.strategy}};
    *out = copy_out(result.dump());
  });
}

#if DASH_ATTN_CUDA

int dash_attn_device_info(int device, char* name, int name_len, int* sms, int* cc_major, int* cc_minor) {
  return guarded([&] {
    if (name == nullptr || name_len < 1 || sms == nullptr || cc_major == nullptr || cc_minor == nullptr) {
      dash::user_error("null output pointer");
    }
    cudaDeviceProp prop{};
    DASH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::string const text = prop.name;
    std::size_t const n = std::min(text.size(), static_cast<std::size_t>(name_len - 1));
    std::memcpy(name, text.data(), n);
    name[n] = '\0';
    *sms = prop.multiProcessorCount;
    *cc_major = prop.major;
    *cc_minor = prop.minor;
  });
}

int dash_attn_runnable_families(int device, char** out) {
  return guarded([&] {
    require_out(out);
    DeviceGuard const guard(device);
    std::vector<std::string> names;
    for (rt::KernelFamily f : rt::runnable_families()) names.emplace_back(rt::family_name(f));
    *out = copy_out(fmt::format("{}", fmt::join(names, ",")));
  });
}

int dash_attn_create(char const* problem_text, int dtype, float softmax_scale, int device, void** handle) {
  return guarded([&] {
    require_out(handle);
    *handle = nullptr;
    json const spec = parse(problem_text, "problem");
    sim::Problem problem = problem_of(spec.at("problem"), family_of(spec));
    if (dtype != 0 && dtype != 1) dash::user_error("dtype must be 0 (bf16) or 1 (fp16), got {}", dtype);
    DeviceGuard const guard(device);
    auto* h = new Handle{device, rt::Attention(std::move(problem), dtype == 0 ? rt::DType::kBf16 : rt::DType::kFp16,
                                               softmax_scale)};
    *handle = h;
  });
}

void dash_attn_destroy(void* handle) {
  if (handle == nullptr) return;
  auto* h = static_cast<Handle*>(handle);
  // The destructor frees device memory: on the object's device, errors ignored (nothing to report
  // them to from a finalizer).
  try {
    DeviceGuard const guard(h->device);
    delete h;
  } catch (...) {
    delete h;
  }
}

int dash_attn_set_schedule(void* handle, char const* document, char const* family, int generic,
                           char** kernel_name) {
  return guarded([&] {
    require_out(kernel_name);
    Handle& h = handle_of(handle);
    if (document == nullptr) dash::user_error("schedule document is null");
    sim::ScheduleDocument const doc = sim::schedule_from_json(document);
    sim::Problem const& problem = h.attention.problem();
    if (!same_problem(doc.problem, problem)) {
      dash::user_error("the schedule is for {}, but the call is {}", describe(doc.problem), describe(problem));
    }
    std::optional<rt::KernelFamily> chosen;
    std::string const name = family == nullptr ? std::string() : std::string(family);
    if (!name.empty()) {
      chosen = rt::parse_family(name);
      if (!chosen) dash::user_error("unknown kernel family '{}': expected sm80 or sm90", name);
    }
    DeviceGuard const guard(h.device);
    h.attention.set_schedule(doc.schedule, generic != 0 ? rt::KernelChoice::kGeneric : rt::KernelChoice::kAuto,
                             chosen);
    *kernel_name = copy_out(fmt::format("{}:{}", rt::family_name(h.attention.family()), h.attention.kernel_name()));
  });
}

int dash_attn_forward(void* handle, DashAttnTensors const* tensors, uintptr_t stream) {
  return guarded([&] {
    Handle const& h = handle_of(handle);
    DeviceGuard const guard(h.device);
    h.attention.forward(tensors_of(tensors), reinterpret_cast<cudaStream_t>(stream));
  });
}

int dash_attn_backward(void* handle, DashAttnTensors const* tensors, int deterministic, uintptr_t stream) {
  return guarded([&] {
    Handle const& h = handle_of(handle);
    DeviceGuard const guard(h.device);
    h.attention.backward(tensors_of(tensors),
                         deterministic != 0 ? rt::Reduction::kDeterministic : rt::Reduction::kAtomic,
                         reinterpret_cast<cudaStream_t>(stream));
  });
}

#else  // A schedule-only build: the GPU entry points say so instead of failing to link.

namespace {
int no_cuda() {
  last_error = "dash_attn was built without the CUDA runtime (no nvcc at build time)";
  return DASH_ATTN_NO_CUDA;
}
}  // namespace

int dash_attn_device_info(int, char*, int, int*, int*, int*) { return no_cuda(); }
int dash_attn_runnable_families(int, char**) { return no_cuda(); }
int dash_attn_create(char const*, int, float, int, void** handle) {
  if (handle != nullptr) *handle = nullptr;
  return no_cuda();
}
void dash_attn_destroy(void*) {}
int dash_attn_set_schedule(void*, char const*, char const*, int, char**) { return no_cuda(); }
int dash_attn_forward(void*, DashAttnTensors const*, uintptr_t) { return no_cuda(); }
int dash_attn_backward(void*, DashAttnTensors const*, int, uintptr_t) { return no_cuda(); }

#endif

}  // extern "C"

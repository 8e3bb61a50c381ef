#include "dagsim/model/calibrate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/json_input.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/schedule_io.h"
#include "dagsim/core/tile_index.h"
#include "dagsim/model/validate.h"

namespace dash::sim {
namespace {

using json = nlohmann::json;

constexpr int kMaxDepth = 6;
constexpr int kMaxSms = 4096;  // as machine_with_sms
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 31;

std::int64_t int_of(json const& v, char const* what) {
  if (!v.is_number_integer()) user_error("trace: {} is not an integer", what);
  std::int64_t const x = v.get<std::int64_t>();
  if (x < 0 || x > (std::int64_t{1} << 50)) user_error("trace: {} {} is out of range", what, x);
  return x;
}

json const& field(json const& object, char const* key, char const* where) {
  if (!object.is_object()) user_error("trace: {} is not an object", where);
  auto const it = object.find(key);
  if (it == object.end()) user_error("trace: {} has no \"{}\"", where, key);
  return *it;
}

std::string string_of(json const& v, char const* what) {
  if (!v.is_string()) user_error("trace: {} is not a string", what);
  return v.get<std::string>();
}

/// "C b0 h3 i5 j2" / "R b0 h3 i5 j2": the kind and (b, h, i, j); false for any other name.
bool parse_step_name(std::string const& name, NodeKind& kind, int& b, int& h, int& i, int& j) {
  char letter = 0;
  char tail = 0;
  if (std::sscanf(name.c_str(), "%c b%d h%d i%d j%d%c", &letter, &b, &h, &i, &j, &tail) != 5)
    return false;
  if (letter != 'C' && letter != 'R') return false;
  kind = letter == 'C' ? NodeKind::kCompute : NodeKind::kReduce;
  return true;
}

struct Percentiles {
  double p10, p50, p90;
};
Percentiles percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    std::size_t const k = std::min(
        v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
    return v[k];
  };
  // The median of an even count: the mean of the two middle samples.
  double const median =
      v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  return {at(0.1), median, at(0.9)};
}

RateFit fit_of(std::vector<double> const& samples) {
  RateFit f;
  f.samples = static_cast<std::int64_t>(samples.size());
  if (samples.empty()) return f;
  Percentiles const p = percentiles(samples);
  f.value = p.p50;
  f.spread = p.p50 > 0 ? (p.p90 - p.p10) / p.p50 : 0.0;
  return f;
}


/// Each CTA's compute slices in the order it ran them (by start, then finish).
std::vector<std::vector<Slice const*>> compute_per_cta(Timeline const& timeline) {
  std::vector<std::vector<Slice const*>> out(timeline.cta_sms.size());
  for (Slice const& s : timeline.slices) {
    if (s.kind == NodeKind::kCompute) out[static_cast<std::size_t>(s.cta)].push_back(&s);
  }
  for (auto& list : out) {
    std::stable_sort(list.begin(), list.end(),
                     [](Slice const* a, Slice const* b) { return std::tie(a->start, a->finish) < std::tie(b->start, b->finish); });
  }
  return out;
}

/// Whether consecutive compute slices of one CTA belong to one work item: a work item's first
/// step is where (b, h, KV tile) changes.
bool same_item(Slice const& a, Slice const& b) {
  return a.batch == b.batch && a.head == b.head && a.kv_tile == b.kv_tile;
}

}  // namespace

TraceRecord trace_from_json(std::string const& text) {
  json const root = parse_user_json(text, kMaxDepth);
  json const& other = field(root, "otherData", "the document");
  TraceRecord t;
  for (char const* key : {"problem", "family", "sms"}) {
    if (!other.is_object() || !other.contains(key)) {
      user_error(
          "trace: otherData has no \"{}\" (a trace of dash simulate --trace or dash bench --trace "
          "is needed)",
          key);
    }
  }
  t.problem = problem_from_json(other["problem"], "trace.otherData.problem");
  t.family = string_of(other["family"], "otherData.family");
  std::int64_t const sms = int_of(other["sms"], "otherData.sms");
  if (sms < 1 || sms > kMaxSms)
    user_error("trace: otherData.sms {} is outside 1..{}", sms, kMaxSms);
  t.sms = static_cast<int>(sms);
  t.timeline.makespan =
      int_of(field(other, "makespan_cycles", "otherData"), "otherData.makespan_cycles");
  std::string unit = string_of(field(other, "time_unit", "otherData"), "otherData.time_unit");
  if (auto const at = unit.rfind(" shown as microseconds"); at != std::string::npos) unit.erase(at);
  t.timeline.time_unit = unit;
  json const& events = field(root, "traceEvents", "the document");
  if (!events.is_array()) user_error("trace: traceEvents is not an array");

  std::unordered_map<std::int64_t, int> cta_of_tid;
  std::unordered_map<std::string, std::int64_t> wait_start;  // slice name -> start of its wait
  for (json const& e : events) {
    std::string const ph = string_of(field(e, "ph", "an event"), "an event's ph");
    if (ph == "M" && string_of(field(e, "name", "an event"), "an event's name") == "thread_name") {
      std::string const label = string_of(
          field(field(e, "args", "a thread_name event"), "name", "its args"), "a thread name");
      int cta = -1;
      int sm = -1;
      if (std::sscanf(label.c_str(), "CTA %d (SM %d)", &cta, &sm) != 2 || cta < 0 ||
          cta >= kMaxSms * 64 || sm < 0) {
        user_error("trace: thread name '{}' is not \"CTA n (SM m)\"", label.substr(0, 64));
      }
      cta_of_tid[int_of(field(e, "tid", "a thread_name event"), "a tid")] = cta;
      if (label.find("dQ writer") == std::string::npos) {
        if (static_cast<std::size_t>(cta) >= t.timeline.cta_sms.size()) {
          t.timeline.cta_sms.resize(static_cast<std::size_t>(cta) + 1, -1);
        }
        t.timeline.cta_sms[static_cast<std::size_t>(cta)] = sm;
      }
    } else if (ph == "X" && string_of(field(e, "name", "an event"), "an event's name") == "wait") {
      std::string const what =
          string_of(field(field(e, "args", "a wait"), "for", "a wait's args"), "a wait's for");
      wait_start[what] = int_of(field(e, "ts", "a wait"), "a wait's ts");
    }
  }
  if (std::find(t.timeline.cta_sms.begin(), t.timeline.cta_sms.end(), -1) !=
      t.timeline.cta_sms.end()) {
    user_error("trace: the CTAs are not numbered 0..n-1");
  }
  for (json const& e : events) {
    if (string_of(e["ph"], "ph") != "X") continue;
    std::string const name = string_of(e["name"], "name");
    Slice s;
    if (!parse_step_name(name, s.kind, s.batch, s.head, s.q_tile, s.kv_tile))
      continue;  // waits, K slices
    if (s.batch < 0 || s.batch >= t.problem.batch || s.head < 0 || s.head >= t.problem.q_heads ||
        s.q_tile < 0 || s.q_tile >= t.problem.q_tiles(s.batch) || s.kv_tile < 0 ||
        s.kv_tile >= t.problem.kv_tiles(s.batch) ||
        !t.problem.is_visible(s.batch, s.q_tile, s.kv_tile)) {
      user_error("trace: slice '{}' is not a step of the problem", name);
    }
    auto const tid = cta_of_tid.find(int_of(field(e, "tid", "a slice"), "a slice's tid"));
    if (tid == cta_of_tid.end()) user_error("trace: slice '{}' is on an unnamed track", name);
    s.cta = tid->second;
    if (static_cast<std::size_t>(s.cta) >= t.timeline.cta_sms.size())
      user_error("trace: slice '{}': no such CTA", name);
    s.sm = t.timeline.cta_sms[static_cast<std::size_t>(s.cta)];
    s.start = int_of(field(e, "ts", "a slice"), "a slice's ts");
    s.finish = s.start + int_of(field(e, "dur", "a slice"), "a slice's dur");
    auto const w = wait_start.find(name);
    s.ready = w == wait_start.end() ? s.start : std::min(w->second, s.start);
    t.timeline.slices.push_back(s);
  }
  return t;
}

TraceRecord read_trace_file(std::string const& path) {
  return read_user_document(path, "trace", kMaxFileBytes, trace_from_json);
}

std::optional<Schedule> schedule_from_trace(TraceRecord const& trace) {
  Problem const& p = trace.problem;
  if (p.is_gqa()) return std::nullopt;
  Schedule s;
  s.strategy = "trace";
  s.launch = LaunchModel::kPersistent;
  s.ctas.resize(trace.timeline.cta_sms.size());
  std::vector<std::vector<Slice const*>> const compute = compute_per_cta(trace.timeline);
  for (std::size_t cta = 0; cta < compute.size(); ++cta) {
    auto& items = s.ctas[cta].items;
    for (std::size_t k = 0; k < compute[cta].size(); ++k) {
      Slice const& c = *compute[cta][k];
      if (k == 0 || !same_item(*compute[cta][k - 1], c)) items.push_back(WorkItem{c.batch, c.head, c.kv_tile, {}});
      items.back().q_order.push_back(c.q_tile);
    }
  }
  std::vector<Slice const*> reduce;
  for (Slice const& sl : trace.timeline.slices) {
    if (sl.kind != NodeKind::kCompute) reduce.push_back(&sl);
  }
  std::stable_sort(reduce.begin(), reduce.end(), [](Slice const* a, Slice const* b) {
    return std::tie(a->start, a->finish, a->cta) < std::tie(b->start, b->finish, b->cta);
  });
  TileIndex const index(p);
  s.dq_order.resize(static_cast<std::size_t>(index.num_dq_tiles()));
  for (Slice const* r : reduce) {
    s.dq_order[static_cast<std::size_t>(index.dq_id(r->batch, r->head, r->q_tile))].push_back(
        r->kv_tile);
  }
  try {
    validate(p, machine_with_sms(std::max(trace.sms, static_cast<int>(s.ctas.size()))), s);
  } catch (UserError const&) {
    return std::nullopt;
  }
  return s;
}

std::vector<CalibrationFit> calibrate(std::vector<TraceRecord> const& traces,
                                      std::vector<FamilyRates> const& base) {
  // family -> samples of flops per cycle, bytes per cycle, latency, per-item cost; and of flops
  // per cycle by head dim
  std::map<std::string, std::array<std::vector<double>, 4>> samples;
  std::map<std::string, std::map<int, std::vector<double>>> flops_by_d;
  for (TraceRecord const& t : traces) {
    Problem const& p = t.problem;
    auto& [flops, bytes, latency, item] = samples[t.family];
    std::vector<double>& flops_d = flops_by_d[t.family][p.head_dim];
    double const step_flops = 10.0 * p.tile_m * p.tile_n * p.head_dim;
    double const tile_bytes = 4.0 * p.tile_m * p.head_dim;
    std::int64_t const whole = std::int64_t{p.tile_m} * p.tile_n;
    std::map<std::tuple<int, int, int>, std::vector<Slice const*>> by_tile;
    for (Slice const& s : t.timeline.slices) {
      if (s.kind != NodeKind::kCompute) {
        Cycles const d = s.finish - s.start;
        if (d > 0) bytes.push_back(tile_bytes / static_cast<double>(d));
        by_tile[{s.batch, s.head, s.q_tile}].push_back(&s);
      }
    }
    // A step's cost is its period: from its start to the next step's start on the CTA (same
    // item), so what the CTA spends between the slices (waiting for loads, the last GEMM, the
    // stage release) counts as the model's step does.
    std::vector<std::pair<Slice const*, Cycles>> firsts;  ///< each item's first step, its period
    std::vector<double> full_periods;
    for (auto const& list : compute_per_cta(t.timeline)) {
      for (std::size_t k = 0; k < list.size(); ++k) {
        Slice const& s = *list[k];
        // An item's last step has no successor in the item: its own slice stands for its period.
        bool const has_next = k + 1 < list.size() && same_item(s, *list[k + 1]);
        Cycles const period = has_next ? list[k + 1]->start - s.start : s.finish - s.start;
        if (period <= 0) continue;
        if (k == 0 || !same_item(*list[k - 1], s)) {
          firsts.emplace_back(&s, period);
        } else if (p.visible_pairs(s.batch, s.q_tile, s.kv_tile) >= whole) {
          flops.push_back(step_flops / static_cast<double>(period));
          flops_d.push_back(step_flops / static_cast<double>(period));
          full_periods.push_back(static_cast<double>(period));
        }
      }
    }
    // o: a first step's period less what the step costs at this trace's full-step period.
    if (!full_periods.empty()) {
      CostModel steps;
      steps.compute = std::llround(percentiles(full_periods).p50);
      steps.proportional = true;
      for (auto const& [s, period] : firsts) {
        Cycles const cost = steps.step_cost(p, s->batch, s->q_tile, s->kv_tile);
        item.push_back(static_cast<double>(period - cost));
      }
    }
    // Hand-offs: consecutive contributions to one dQ tile where the later one was already waiting.
    for (auto& [tile, list] : by_tile) {
      std::sort(list.begin(), list.end(),
                [](Slice const* a, Slice const* b) { return a->start < b->start; });
      for (std::size_t k = 1; k < list.size(); ++k) {
        if (list[k]->ready < list[k - 1]->finish) {
          latency.push_back(static_cast<double>(list[k]->start - list[k - 1]->finish));
        }
      }
    }
  }
  std::vector<CalibrationFit> out;
  for (auto const& [family, s] : samples) {
    auto const b = std::find_if(base.begin(), base.end(),
                                [&](FamilyRates const& f) { return f.family == family; });
    KernelRates const start = b == base.end() ? KernelRates{} : b->rates;
    CalibrationFit fit;
    fit.family = family;
    fit.flops_per_cycle = fit_of(s[0]);
    fit.bytes_per_cycle = fit_of(s[1]);
    fit.latency = fit_of(s[2]);
    fit.item = fit_of(s[3]);
    if (fit.flops_per_cycle.samples == 0) {
      user_error("calibrate: the traces of family {} have no full step to fit the compute rate to",
                 family);
    }
    fit.rates = start;
    auto const rounded = [](double v) { return std::max(1, static_cast<int>(std::lround(v))); };
    fit.rates.flops_per_cycle = rounded(fit.flops_per_cycle.value);
    // Per head dim: each traced head dim's median replaces the base's entry; it is kept only where
    // it differs from the overall median (one head dim traced: none).
    std::erase_if(fit.rates.flops_by_head_dim, [&](HeadDimFlops const& e) {
      return flops_by_d[family].count(e.head_dim) > 0;
    });
    for (auto const& [d, list] : flops_by_d[family]) {
      if (list.empty()) continue;
      RateFit const one = fit_of(list);
      fit.flops_by_head_dim.emplace_back(d, one);
      if (rounded(one.value) != fit.rates.flops_per_cycle) {
        fit.rates.flops_by_head_dim.push_back({d, rounded(one.value)});
      }
    }
    std::sort(fit.rates.flops_by_head_dim.begin(), fit.rates.flops_by_head_dim.end(),
              [](HeadDimFlops const& x, HeadDimFlops const& y) { return x.head_dim < y.head_dim; });
    if (fit.bytes_per_cycle.samples > 0) {
      fit.rates.reduce_bytes_per_cycle =
          std::max(1, static_cast<int>(std::lround(fit.bytes_per_cycle.value)));
    }
    if (fit.latency.samples > 0)
      fit.rates.latency = std::max<Cycles>(0, std::llround(fit.latency.value));
    if (fit.item.samples > 0)
      fit.rates.item_cycles = std::max<Cycles>(0, std::llround(fit.item.value));
    out.push_back(fit);
  }
  return out;
}

}  // namespace dash::sim

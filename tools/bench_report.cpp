#include "tools/bench_report.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "dagsim/core/flops.h"
#include "runtime/dtype.h"

namespace dash::cli {
namespace {

std::string fixed(std::optional<double> value, int digits, char const* suffix = "") {
  return value ? fmt::format("{:.{}f}{}", *value, digits, suffix) : std::string("-");
}

nlohmann::json optional_json(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

// Records of one shape and strategy are shown on one line; this keys them in plan order.
using RowKey = std::tuple<std::size_t, std::string>;

}  // namespace

std::optional<double> BenchRecord::tflops() const {
  if (!ms_median || *ms_median <= 0.0) return std::nullopt;
  return sim::tflops(flops, *ms_median);
}

std::string shape_label(sim::Problem const& p) {
  std::string heads =
      p.is_gqa() ? fmt::format("{}/{}", p.q_heads, p.kv_heads) : fmt::format("{}", p.q_heads);
  std::string len = p.seqlen_q == p.seqlen_k ? fmt::format("{}", p.seqlen_q)
                                             : fmt::format("{}/{}", p.seqlen_q, p.seqlen_k);
  return fmt::format("d={} {} s={} b={} h={}", p.head_dim, sim::to_string(p.mask), len, p.batch,
                     heads);
}

void derive_ratios(std::vector<BenchRecord>& records) {
  auto find = [&records](sim::Problem const& p, std::string const& strategy,
                         BenchMode mode) -> BenchRecord const* {
    for (auto const& r : records) {
      if (r.problem == p && r.strategy == strategy && r.mode == mode) return &r;
    }
    return nullptr;
  };
  for (auto& r : records) {
    r.det_over_nondet.reset();
    r.predicted_vs_fa3.reset();
    r.measured_vs_fa3.reset();
    if (r.predicted_makespan && r.fa3_makespan && *r.predicted_makespan > 0) {
      r.predicted_vs_fa3 =
          static_cast<double>(*r.fa3_makespan) / static_cast<double>(*r.predicted_makespan);
    }
    if (BenchRecord const* fa3 = find(r.problem, "fa3", r.mode);
        fa3 && fa3->ms_median && r.ms_median) {
      r.measured_vs_fa3 = *fa3->ms_median / *r.ms_median;
    }
    BenchRecord const* det = find(r.problem, r.strategy, BenchMode::kDet);
    BenchRecord const* nondet = find(r.problem, r.strategy, BenchMode::kNondet);
    if (det && nondet && det->ms_median && nondet->ms_median) {
      // Same FLOPs: the TFLOP/s ratio is the inverse time ratio.
      r.det_over_nondet = *nondet->ms_median / *det->ms_median;
    }
  }
}

std::string format_table(BenchRun const& run, std::vector<BenchRecord> const& records) {
  std::string out;
  if (run.measured) {
    out += fmt::format(
        "dash bench: {} ({} SMs), schedules for {} SMs, bf16, backward (pre+main+post), "
        "median of {} after {} warm-up, {}{}\n",
        run.gpu, run.sms, run.schedule_sms, run.iters, run.warmup, run.date,
        run.commit.empty() ? "" : ", commit " + run.commit);
  } else {
    out += fmt::format(
        "dash bench --dry-run: nothing measured; simulator predictions for {} SMs, {}\n",
        run.schedule_sms, run.date);
  }
  out +=
      "TFLOP/s = 2.5 x 4*b*h*s_q*s_k*d / time (halved for causal); det/nondet = det TFLOP/s over "
      "non-det;\n"
      "pred and meas = speedup over fa3 (deterministic): simulator makespan ratio vs measured time "
      "ratio.\n\n";

  std::map<RowKey, std::pair<BenchRecord const*, BenchRecord const*>> rows;  // (det, nondet)
  std::vector<RowKey> order;
  std::vector<sim::Problem> shapes;
  for (auto const& r : records) {
    std::size_t shape = 0;
    while (shape < shapes.size() && !(shapes[shape] == r.problem)) ++shape;
    if (shape == shapes.size()) shapes.push_back(r.problem);
    RowKey const key{shape, r.strategy};
    if (rows.find(key) == rows.end()) order.push_back(key);
    auto& slot = rows[key];
    (r.mode == BenchMode::kDet ? slot.first : slot.second) = &r;
  }
  out +=
      fmt::format("{:<34} {:<16} {:>9} {:>8} {:>9} {:>8} {:>7} {:>7} {:>7}\n", "shape", "strategy",
                  "det ms", "TFLOP/s", "nodet ms", "TFLOP/s", "det/nd", "pred", "meas");
  std::size_t last_shape = shapes.size();
  for (auto const& key : order) {
    auto const [det, nondet] = rows[key];
    BenchRecord const& any = det != nullptr ? *det : *nondet;
    if (std::get<0>(key) != last_shape && last_shape != shapes.size()) out += "\n";
    last_shape = std::get<0>(key);
    std::string line = fmt::format("{:<34} {:<16}", shape_label(any.problem), any.strategy);
    auto measured = [](BenchRecord const* r) {
      if (r == nullptr) return fmt::format(" {:>9} {:>8}", "", "");
      if (!r->refused.empty()) return fmt::format(" {:>9} {:>8}", "refused", "");
      return fmt::format(" {:>9} {:>8}", fixed(r->ms_median, 3), fixed(r->tflops(), 1));
    };
    line += measured(det);
    line += measured(nondet);
    BenchRecord const& ratios = det != nullptr ? *det : *nondet;
    line += fmt::format(" {:>7} {:>7} {:>7}", fixed(ratios.det_over_nondet, 3),
                        fixed(det ? det->predicted_vs_fa3 : std::nullopt, 3, "x"),
                        fixed(det ? det->measured_vs_fa3 : std::nullopt, 3, "x"));
    for (auto const* r : {det, nondet}) {
      if (r != nullptr && !r->refused.empty()) {
        line += fmt::format("  [{}: {}]", to_string(r->mode), r->refused);
        break;
      }
    }
    out += line + "\n";
  }
  return out;
}

nlohmann::json to_json(BenchRun const& run, std::vector<BenchRecord> const& records) {
  nlohmann::json list = nlohmann::json::array();
  for (auto const& r : records) {
    sim::Problem const& p = r.problem;
    nlohmann::json j = {
        {"tool", "dash"},
        {"date", run.date},
        {"gpu", run.gpu},
        {"sms", run.sms},
        {"schedule_sms", run.schedule_sms},
        {"commit", run.commit.empty() ? nlohmann::json() : nlohmann::json(run.commit)},
        {"measured", run.measured},
        {"dtype", rt::to_string(rt::DType::kBf16)},  // dash bench times bf16
        {"batch", p.batch},
        {"heads", p.q_heads},
        {"kv_heads", p.kv_heads},
        {"seqlen_q", p.seqlen_q},
        {"seqlen_k", p.seqlen_k},
        {"head_dim", p.head_dim},
        {"mask", sim::to_string(p.mask)},
        {"causal", p.mask.kind == sim::MaskKind::kCausal},
        {"tile_m", p.tile_m},
        {"tile_n", p.tile_n},
        {"strategy", r.strategy},
        {"mode", to_string(r.mode)},
        {"flops", r.flops},
        {"iters", run.iters},
        {"warmup", run.warmup},
        {"seed", run.seed},
        {"status", !r.refused.empty() ? "refused" : (run.measured ? "ok" : "planned")},
    };
    if (!r.refused.empty()) j["refused"] = r.refused;
    j["ms"] = optional_json(r.ms_median);
    j["tflops"] = optional_json(r.tflops());
    j["ms_all"] = r.ms;
    if (!r.kernel.empty()) j["kernel"] = r.kernel;
    if (r.grid > 0) j["grid"] = r.grid;
    if (r.input_sets > 0) j["input_sets"] = r.input_sets;
    if (r.dq_zeroed) j["dq_zeroed"] = *r.dq_zeroed;
    j["predicted_makespan"] =
        r.predicted_makespan ? nlohmann::json(*r.predicted_makespan) : nlohmann::json();
    j["predicted_vs_fa3"] = optional_json(r.predicted_vs_fa3);
    j["live_bytes"] = r.live_bytes ? nlohmann::json(*r.live_bytes) : nlohmann::json();
    j["measured_vs_fa3"] = optional_json(r.measured_vs_fa3);
    j["det_over_nondet"] = optional_json(r.det_over_nondet);
    list.push_back(std::move(j));
  }
  return list;
}

}  // namespace dash::cli

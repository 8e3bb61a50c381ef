// Times our backward (deterministic per strategy, and atomic) on DASH-grid shapes the way `dash
// bench` does (BackwardTimer, tools/bench_device.h: CUDA events, 3 warm-up calls, the median of 10,
// input sets rotated so that no call finds its inputs in L2).
// Prints one line per measurement; TFLOP/s from dash::sim::backward_flops (dagsim/core/flops.h).
//   rt_bench [quick]   timings
//   rt_bench shapes [--strategies=A,B] D/S/MASK...  timings of the given grid shapes only (e.g.
//                      128/8192/causal), of the named strategies only if given ("atomic": fa3's
//                      order without tickets; "atomic:NAME": strategy NAME's order without them;
//                      "dynamic:NAME", "atomic:dynamic:NAME": NAME under the dynamic launch)
//   rt_bench specialized [MANIFEST [ROUNDS [MATCH]]]
//                      every kernel of generated/manifest.json (whose
//                      file name contains MATCH, if given): its problem and strategy on this GPU,
//                      the specialization vs the generic kernel on the same inputs, dQ/dK/dV
//                      bitwise, then timed in ROUNDS (default 5) interleaved rounds (median of 10
//                      each); median ratio and its min..max; a table. ROUNDS 0: the bitwise check
//                      only (one backward per kernel: what scripts/gpu.sh sanitize runs)
//   rt_bench grid [R]  determinism on the whole DASH grid: per shape and named strategy, R (>= 10)
//                      deterministic backward runs compared bitwise (dQ, dK, dV) with a first
//                      one, and the atomic mode under the same test; a compact table.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../harness.h"
#include "dagsim/benchmark/grid.h"
#include "dagsim/core/error.h"
#include "dagsim/core/flops.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/median.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/validate.h"
#include "runtime/bitwise_diff.h"
#include "runtime/dtype.h"
#include "tools/bench_device.h"

using namespace dash;
using namespace dash::rt;

namespace {

/// A strategy key of `shapes --strategies` without its "atomic:" prefix, split into the named
/// strategy and its launch: "dynamic:NAME" is NAME under the dynamic launch (one CTA per work item,
/// the hardware dispatching them in launch order), anything else the persistent grid.
std::pair<std::string, sim::LaunchModel> strategy_launch(std::string const& order) {
  if (order.rfind("dynamic:", 0) == 0) return {order.substr(8), sim::LaunchModel::kDynamic};
  return {order, sim::LaunchModel::kPersistent};
}

/// A grid shape with the tiles every family has (family_tile_m: `shapes` without a TM, so that A/B
/// runs of older and newer builds time the same tiles), or `tile_m` rows.
sim::Problem grid_problem(int d, int s, bool causal, int tile_m = 0) {
  return sim::grid_problem(s, d, causal ? sim::Mask{sim::MaskKind::kCausal, 0, 0} : sim::Mask{},
                           tile_m > 0 ? tile_m : family_tile_m(KernelFamily::kSm80, d),
                           family_tile_n(KernelFamily::kSm80));
}

/// One input set for the bitwise comparisons, forward already run.
std::unique_ptr<test::DeviceTensors> make_inputs(sim::Problem const& p, Attention const& attn,
                                                 std::uint64_t seed) {
  auto t = std::make_unique<test::DeviceTensors>(p, DType::kBf16);
  t->upload(test::random_inputs(p, DType::kBf16, seed));
  attn.forward(t->tensors(), nullptr);
  return t;
}

/// The timing plan of every rt_bench measurement: `dash bench`'s defaults.
constexpr cli::TimingPlan kPlan{3, 10};

/// Median milliseconds of the timer's deterministic or atomic backward under kPlan.
double median_ms(cli::BackwardTimer& timer, Reduction mode) {
  return sim::median(
      timer
          .time(mode == Reduction::kDeterministic ? cli::BenchMode::kDet : cli::BenchMode::kNondet,
                kPlan)
          .ms);
}

/// Half the range: the +- of a set of round medians.
double spread_of(std::vector<double> const& v) {
  auto const [lo, hi] = std::minmax_element(v.begin(), v.end());
  return 0.5 * (*hi - *lo);
}

/// dQ, dK, dV of one backward run copied aside on the device (16-bit words).
class GradCopy {
 public:
  GradCopy(AttentionTensors const& t, sim::Problem const& p) {
    words_[0] =
        static_cast<std::size_t>(p.total_q()) * static_cast<std::size_t>(p.q_heads * p.head_dim);
    words_[1] = words_[2] =
        static_cast<std::size_t>(p.total_k()) * static_cast<std::size_t>(p.kv_heads * p.head_dim);
    void const* src[3] = {t.dq.data, t.dk.data, t.dv.data};
    for (int x = 0; x < 3; ++x) {
      DASH_CUDA_CHECK(cudaMalloc(&copy_[x], words_[x] * 2));
      DASH_CUDA_CHECK(cudaMemcpy(copy_[x], src[x], words_[x] * 2, cudaMemcpyDeviceToDevice));
    }
  }
  ~GradCopy() {
    for (void* c : copy_) cudaFree(c);
  }
  GradCopy(GradCopy const&) = delete;
  GradCopy& operator=(GradCopy const&) = delete;
  /// 16-bit words of dQ, dK, dV in `t` that differ from this copy.
  [[nodiscard]] std::int64_t differing_words(AttentionTensors const& t) const {
    void const* now[3] = {t.dq.data, t.dk.data, t.dv.data};
    std::int64_t n = 0;
    for (int x = 0; x < 3; ++x) n += count_differing_words(now[x], copy_[x], words_[x], nullptr);
    return n;
  }

 private:
  std::size_t words_[3] = {0, 0, 0};
  void* copy_[3] = {nullptr, nullptr, nullptr};
};

sim::Problem manifest_problem(nlohmann::json const& k) {
  sim::Problem p;
  p.batch = k.at("batch").get<int>();
  p.head_dim = k.at("head_dim").get<int>();
  p.q_heads = k.at("q_heads").get<int>();
  p.kv_heads = k.at("kv_heads").get<int>();
  p.seqlen_q = k.at("seqlen_q").get<int>();
  p.seqlen_k = k.at("seqlen_k").get<int>();
  p.tile_m = k.at("tile_m").get<int>();
  p.tile_n = k.at("tile_n").get<int>();
  std::string const mask = k.at("mask").get<std::string>();
  if (mask == "full") {
    p.mask = sim::Mask{};
  } else if (mask == "causal") {
    p.mask = sim::Mask{sim::MaskKind::kCausal, 0, 0};
  } else if (mask == "window") {
    p.mask = sim::Mask{sim::MaskKind::kWindow, k.at("window_left").get<int>(),
                       k.at("window_right").get<int>()};
  } else {
    user_error("manifest: unknown mask '{}'", mask);
  }
  if (parse_dtype(k.at("dtype").get<std::string>()) != DType::kBf16)
    user_error("manifest: only bf16 kernels are compared here");
  sim::validate_problem(p);
  return p;
}

/// Specialized (generated) vs generic kernel, per manifest entry: same problem, schedule and
/// inputs; bitwise equality of dQ/dK/dV and the median times. Returns 1 if any entry fails.
int run_specialized(std::string const& manifest_path, int sms, int rounds,
                    std::string const& match) {
  std::ifstream in(manifest_path);
  if (!in) user_error("cannot read {}", manifest_path);
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(in);
  } catch (nlohmann::json::exception const& e) {
    user_error("{}: not JSON ({})", manifest_path, e.what());
  }
  std::printf(
      "specialized vs generic: deterministic backward, bf16, same inputs; %d interleaved rounds, "
      "each the median of 10 runs after 3 warm-up per kernel (dash bench's timer); ms = median "
      "over rounds, +- = (max - min) / 2 over rounds; ratio = generic ms / specialized ms per "
      "round: median, min, max\n",
      rounds);
  std::printf("%-44s %-16s %-20s %-18s %-14s %9s %7s %8s %9s %7s %8s %6s %6s %6s\n", "spec",
              "strategy", "specialized kernel", "generic kernel", "bitwise equal", "gen ms", "+-",
              "TFLOP/s", "spec ms", "+-", "TFLOP/s", "ratio", "min", "max");
  int failures = 0;
  int considered = 0;
  cli::BackwardTimer timer(cli::query_device(), 2024);
  for (auto const& k : manifest.at("kernels")) {
    std::string const file = k.at("file").get<std::string>();
    std::string const spec = file.substr(0, file.rfind('.'));
    std::string const strategy = k.at("strategy").get<std::string>();
    if (file.find(match) == std::string::npos) continue;
    try {
      sim::Machine const machine = sim::machine_preset(k.at("gpu").get<std::string>());
      if (k.at("sms").get<int>() != sms || machine.sms != sms) {
        std::printf("%-44s %-16s spec not for this GPU (spec %d SMs, GPU %d)\n", spec.c_str(),
                    strategy.c_str(), k.at("sms").get<int>(), sms);
        continue;
      }
      ++considered;  // a kernel for this GPU, compared below
      sim::Problem const p = manifest_problem(k);
      sim::Schedule const schedule = sim::make_strategy(
          strategy, p, machine,
          k.at("launch").get<std::string>() == "dynamic" ? sim::LaunchModel::kDynamic
                                                         : sim::LaunchModel::kPersistent);
      std::uint64_t const hash = schedule_hash(schedule);
      std::uint64_t const want = std::stoull(k.at("schedule_hash").get<std::string>(), nullptr, 16);
      if (hash != want) {
        std::printf("%-44s %-16s FAIL: schedule hash %016" PRIx64 " here, %016" PRIx64
                    " in the manifest\n",
                    spec.c_str(), strategy.c_str(), hash, want);
        ++failures;
        continue;
      }
      Attention attn(p, DType::kBf16, 1.f / std::sqrt(float(p.head_dim)));
      std::unique_ptr<test::DeviceTensors> const inputs = make_inputs(p, attn, 2024);
      AttentionTensors const t = inputs->tensors();
      // The specialization's family (the manifest says): its generic kernel is the baseline it
      // must equal.
      std::optional<KernelFamily> const named =
          parse_family(k.value("family", std::string("sm80")));
      if (!named) {
        std::printf("%-44s FAIL: unknown family in the manifest\n", spec.c_str());
        ++failures;
        continue;
      }
      KernelFamily const family = *named;
      attn.set_schedule(schedule, KernelChoice::kGeneric, family);
      std::string const generic_name = attn.kernel_name();
      inputs->poison_backward(nullptr);
      attn.backward(t, Reduction::kDeterministic, nullptr);
      GradCopy const generic_grads(t, p);

      attn.set_schedule(schedule, KernelChoice::kAuto, family);
      std::string const special_name = attn.kernel_name();
      bool const dispatched = special_name != generic_name;
      inputs->poison_backward(nullptr);
      attn.backward(t, Reduction::kDeterministic, nullptr);
      std::int64_t const differ = generic_grads.differing_words(t);
      if (rounds == 0) {
        std::printf("%-44s %-16s %-20s %-18s %s%s\n", spec.c_str(), strategy.c_str(),
                    special_name.c_str(), generic_name.c_str(), differ == 0 ? "yes" : "NO",
                    dispatched ? "" : "  FAIL: specialization not dispatched");
        if (!dispatched || differ != 0) ++failures;
        std::fflush(stdout);
        continue;
      }
      timer.set_problem(p);

      // Interleaved rounds: clock and thermal drift hit both kernels alike; the order within a
      // round alternates so neither always runs on a warmer GPU.
      // The timer runs its own Attention: it must pick the kernels checked above.
      std::vector<double> generic_ms, special_ms, ratios;
      bool same_kernels = true;
      for (int r = 0; r < rounds; ++r) {
        double g = 0, x = 0;
        for (int half = 0; half < 2; ++half) {
          bool const generic_now = (half == 0) == (r % 2 == 0);
          timer.set_schedule(schedule, family, generic_now);
          same_kernels =
              same_kernels && timer.kernel_name() == (generic_now ? generic_name : special_name);
          (generic_now ? g : x) = median_ms(timer, Reduction::kDeterministic);
        }
        generic_ms.push_back(g);
        special_ms.push_back(x);
        ratios.push_back(g / x);
      }
      double const gen = sim::median(generic_ms);
      double const spec_med = sim::median(special_ms);
      double const ratio = sim::median(ratios);
      double const flops = sim::backward_flops(p);
      char equal[32];
      std::snprintf(equal, sizeof equal, "%s", differ == 0 ? "yes" : "NO");
      if (differ != 0)
        std::snprintf(equal, sizeof equal, "NO (%lld words)", static_cast<long long>(differ));
      std::printf(
          "%-44s %-16s %-20s %-18s %-14s %9.3f %7.3f %8.1f %9.3f %7.3f %8.1f %6.3f %6.3f %6.3f%s\n",
          spec.c_str(), strategy.c_str(), special_name.c_str(), generic_name.c_str(), equal, gen,
          spread_of(generic_ms), sim::tflops(flops, gen), spec_med, spread_of(special_ms),
          sim::tflops(flops, spec_med), ratio, *std::min_element(ratios.begin(), ratios.end()),
          *std::max_element(ratios.begin(), ratios.end()),
          !dispatched     ? "  FAIL: specialization not dispatched"
          : !same_kernels ? "  FAIL: the timer ran other kernels than the ones checked"
                          : "");
      std::printf("%-44s rounds (generic ms / specialized ms):", spec.c_str());
      for (int r = 0; r < rounds; ++r) std::printf(" %.3f/%.3f", generic_ms[r], special_ms[r]);
      std::printf("\n");
      if (!dispatched || !same_kernels || differ != 0) ++failures;
    } catch (UserError const& e) {
      std::printf("%-44s %-16s FAIL: %s\n", spec.c_str(), strategy.c_str(), e.what());
      ++failures;
    } catch (nlohmann::json::exception const& e) {
      std::printf("%-44s %-16s FAIL: manifest entry: %s\n", spec.c_str(), strategy.c_str(),
                  e.what());
      ++failures;
    }
    std::fflush(stdout);
  }
  if (considered == 0) {
    std::printf(
        "specialized vs generic: FAIL (no kernel of the manifest for this GPU matches '%s')\n",
        match.c_str());
    return 1;
  }
  std::printf("specialized vs generic: %s (%d entries fail)\n", failures == 0 ? "PASS" : "FAIL",
              failures);
  return failures == 0 ? 0 : 1;
}

/// One cell of the grid table: runs of `repeats` whose dQ/dK/dV bits differ from the first run's,
/// and the most differing 16-bit words seen in one run.
struct DiffCell {
  bool refused = false;
  int runs_differ = 0;
  std::int64_t max_words = 0;
};

int run_grid(int repeats, int sms) {
  // Every grid shape has 16384 tokens x 2048 hidden, so one host input set serves them all.
  sim::Problem const first = grid_problem(128, 512, false);
  AttentionInputs const inputs = test::random_inputs(first, DType::kBf16, 4242);
  std::vector<std::string> modes = sim::strategy_names();
  std::printf(
      "grid determinism: %d runs per cell vs a first run, bitwise dQ dK dV (bf16); cell = runs "
      "that differ"
      " (atomic: runs that differ / most differing elements in a run); '-' = strategy refuses the "
      "shape\n",
      repeats);
  std::printf("%-4s %-6s %-6s", "d", "seqlen", "mask");
  for (auto const& m : modes) std::printf(" %15s", m.c_str());
  std::printf(" %22s\n", "atomic (fa3)");
  int failures = 0;
  std::optional<KernelFamily> const planned = planning_family(runnable_families());
  if (!planned) user_error("grid: no kernel family runs on this GPU");
  KernelFamily const grid_family = *planned;
  for (int d : {64, 128}) {
    for (bool causal : {false, true}) {
      for (int s = 512; s <= 16384; s *= 2) {
        // The tiles `dash bench` gives the shape on this GPU: the auto family's defaults (80 rows
        // at d128 full on the sm90 family).
        sim::Problem const p =
            grid_problem(d, s, causal, family_default_tile_m(grid_family, d, causal));
        test::DeviceTensors dev(p, DType::kBf16);
        dev.upload(inputs);
        Attention attn(p, DType::kBf16, 1.f / std::sqrt(float(d)));
        attn.forward(dev.tensors(), nullptr);
        AttentionTensors const t = dev.tensors();
        std::size_t const words_q = std::size_t{16384} * 2048;  // dq, dk, dv: same size here
        void* ref = nullptr;
        DASH_CUDA_CHECK(cudaMalloc(&ref, 3 * words_q * 2));
        auto* ref16 = static_cast<std::uint16_t*>(ref);
        std::vector<std::pair<std::string, Reduction>> runs;
        for (auto const& name : modes) runs.emplace_back(name, Reduction::kDeterministic);
        runs.emplace_back("fa3", Reduction::kAtomic);
        std::vector<DiffCell> cells;
        for (auto const& [name, mode] : runs) {
          DiffCell cell;
          try {
            attn.set_schedule(sim::make_strategy(name, p, sim::machine_with_sms(sms)));
          } catch (UserError const&) {
            cell.refused = true;
            cells.push_back(cell);
            continue;
          }
          for (int r = 0; r <= repeats; ++r) {
            dev.poison_backward(nullptr);
            attn.backward(t, mode, nullptr);
            void* outs[3] = {t.dq.data, t.dk.data, t.dv.data};
            if (r == 0) {
              for (int x = 0; x < 3; ++x) {
                DASH_CUDA_CHECK(cudaMemcpy(ref16 + x * words_q, outs[x], words_q * 2,
                                           cudaMemcpyDeviceToDevice));
              }
              continue;
            }
            std::int64_t words = 0;
            for (int x = 0; x < 3; ++x)
              words += count_differing_words(outs[x], ref16 + x * words_q, words_q, nullptr);
            cell.runs_differ += words > 0 ? 1 : 0;
            cell.max_words = std::max(cell.max_words, words);
          }
          if (mode == Reduction::kDeterministic && cell.runs_differ > 0) ++failures;
          cells.push_back(cell);
        }
        cudaFree(ref);
        std::printf("%-4d %-6d %-6s", d, s, causal ? "causal" : "full");
        for (std::size_t c = 0; c + 1 < cells.size(); ++c) {
          if (cells[c].refused) {
            std::printf(" %15s", "-");
          } else {
            std::printf(" %12d/%-2d", cells[c].runs_differ, repeats);
          }
        }
        DiffCell const& at = cells.back();
        std::printf(" %8d/%-2d %11lld\n", at.runs_differ, repeats,
                    static_cast<long long>(at.max_words));
        std::fflush(stdout);
      }
    }
  }
  std::printf("grid determinism: %s (%d deterministic cells differ)\n",
              failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}

struct Shape {
  int d;
  int s;
  bool causal;
  int tile_m = 0;  ///< 0: the family's; else a Q tile the family offers too (80 at d128 on sm90)
};

/// "D/S/MASK[/TM]", e.g. 128/8192/causal or 128/8192/full/80, a DASH-grid shape (d 64 or 128,
/// seqlen 512..16384), optionally with another Q tile (its lines then say MASK/TM).
Shape parse_shape(std::string const& text) {
  int d = 0;
  int s = 0;
  int tm = 0;
  char mask[16] = {};
  int const n = std::sscanf(text.c_str(), "%d/%d/%15[a-z]/%d", &d, &s, mask, &tm);
  if ((n != 3 && n != 4) || (d != 64 && d != 128) || s < 512 || s > 16384 || 16384 % s != 0 ||
      (std::string(mask) != "full" && std::string(mask) != "causal") ||
      (n == 4 && (tm <= 0 || !family_has_tiles(KernelFamily::kSm90, d, tm,
                                               family_tile_n(KernelFamily::kSm90))))) {
    user_error(
        "shape '{}': want D/S/MASK[/TM] with D 64 or 128, S a power of two in 512..16384, MASK "
        "full or "
        "causal, TM a Q tile of the sm90 family",
        text);
  }
  return {d, s, std::string(mask) == "causal", n == 4 ? tm : 0};
}

/// Deterministic backward per named strategy and the atomic one, per shape: one line each.
int run_timings(std::vector<Shape> const& shapes, int sms,
                std::vector<std::string> const& only = {}) {
  cli::BackwardTimer timer(cli::query_device(), 1000);
  std::printf("%-4s %-6s %-7s %-16s %-13s %9s %9s\n", "d", "seqlen", "mask", "strategy", "mode",
              "ms", "TFLOP/s");
  for (auto const& sh : shapes) {
    sim::Problem p = grid_problem(sh.d, sh.s, sh.causal);
    if (sh.tile_m > 0) p.tile_m = sh.tile_m;
    std::string const mask = sh.tile_m > 0
                                 ? fmt::format("{}/{}", sh.causal ? "causal" : "full", sh.tile_m)
                                 : (sh.causal ? "causal" : "full");
    timer.set_problem(p);
    std::vector<std::pair<std::string, Reduction>> runs;
    for (auto const& name : sim::strategy_names())
      runs.emplace_back(name, Reduction::kDeterministic);
    runs.emplace_back("fa3", Reduction::kAtomic);
    // "atomic:NAME" asks for NAME's order without tickets (fa3's is "atomic", and the parser
    // turned "atomic:fa3" into it).
    for (auto const& key : only) {
      if (key.rfind("atomic:", 0) == 0) runs.emplace_back(key.substr(7), Reduction::kAtomic);
      if (key.rfind("dynamic:", 0) == 0) runs.emplace_back(key, Reduction::kDeterministic);
    }
    auto const wanted = [&](std::string const& name, Reduction mode) {
      std::string const key = mode != Reduction::kAtomic ? name
                              : name == "fa3"            ? "atomic"
                                                         : "atomic:" + name;
      return only.empty() || std::find(only.begin(), only.end(), key) != only.end();
    };
    for (auto const& [name, mode] : runs) {
      if (!wanted(name, mode)) continue;
      try {
        auto const [strategy, launch] = strategy_launch(name);
        timer.set_schedule(sim::make_strategy(strategy, p, sim::machine_with_sms(sms), launch),
                           std::nullopt);
      } catch (UserError const&) {
        continue;  // the strategy refuses this shape
      }
      double const med = median_ms(timer, mode);
      std::printf("%-4d %-6d %-7s %-16s %-13s %9.3f %9.1f\n", sh.d, sh.s, mask.c_str(),
                  name.c_str(), mode == Reduction::kDeterministic ? "deterministic" : "atomic", med,
                  sim::tflops(sim::backward_flops(p), med));
      std::fflush(stdout);
    }
  }
  return 0;
}

int run(std::vector<std::string> const& args) {
  int sms = 0;
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::string const mode = args.empty() ? "" : args[0];
  if (mode == "grid") {
    int const repeats = args.size() > 1 ? std::max(10, std::atoi(args[1].c_str())) : 10;
    return run_grid(repeats, sms);
  }
  if (mode == "specialized") {
    int rounds = 5;
    if (args.size() > 2) {
      char* end = nullptr;
      long const r = std::strtol(args[2].c_str(), &end, 10);
      if (end == args[2].c_str() || *end != '\0' || r < 0 || r > 100) {
        user_error("specialized: ROUNDS must be an integer in 0..100, got '{}'", args[2]);
      }
      rounds = static_cast<int>(r);
    }
    return run_specialized(args.size() > 1 ? args[1] : "generated/manifest.json", sms, rounds,
                           args.size() > 3 ? args[3] : "");
  }
  std::vector<Shape> shapes = {{128, 1024, false}, {128, 4096, false}, {128, 8192, false},
                               {128, 1024, true},  {128, 4096, true},  {128, 8192, true},
                               {64, 1024, false},  {64, 4096, false},  {64, 4096, true}};
  if (mode == "quick") {
    shapes = {{128, 8192, false}, {128, 8192, true}};
  } else if (mode == "shapes") {
    shapes.clear();
    std::vector<std::string> only;
    std::string const flag = "--strategies=";
    for (std::size_t a = 1; a < args.size(); ++a) {
      if (args[a].rfind(flag, 0) != 0) {
        shapes.push_back(parse_shape(args[a]));
        continue;
      }
      std::string const list = args[a].substr(flag.size()) + ",";
      for (std::size_t at = 0, comma = 0; (comma = list.find(',', at)) != std::string::npos;
           at = comma + 1) {
        std::string const name = list.substr(at, comma - at);
        auto const names = sim::strategy_names();
        std::string const order =
            strategy_launch(name.rfind("atomic:", 0) == 0 ? name.substr(7) : name).first;
        if (name != "atomic" && std::find(names.begin(), names.end(), order) == names.end()) {
          user_error("rt_bench shapes: unknown strategy '{}' in {}", name, args[a]);
        }
        only.push_back(name == "atomic:fa3" ? "atomic"
                                            : name);  // fa3's order without tickets has one name
      }
    }
    if (shapes.empty()) user_error("rt_bench shapes: name at least one D/S/MASK shape");
    return run_timings(shapes, sms, only);
  } else if (!mode.empty()) {
    user_error("unknown mode '{}' (quick, shapes, grid, specialized)", mode);
  }
  return run_timings(shapes, sms);
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 77;
  }
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (UserError const& e) {
    std::fprintf(stderr, "rt_bench: %s\n", e.what());
    return 2;
  }
}

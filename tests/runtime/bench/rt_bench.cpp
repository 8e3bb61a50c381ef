// Times our backward (deterministic per strategy, and atomic) on DASH-grid shapes: CUDA events,
// warm-up apart, median of 10, two input sets alternated (each several times the 60 MB L2).
// Prints one line per measurement; TFLOP/s = 2.5 * 4 b h s_q s_k d, halved for causal.
//   rt_bench [quick]   timings
//   rt_bench grid [R]  determinism on the whole DASH grid: per shape and named strategy, R (>= 10)
//                      deterministic backward runs compared bitwise (dQ, dK, dV) with a first
//                      one, and the atomic mode under the same test; a compact table.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "../harness.h"
#include "runtime/bitwise_diff.h"
#include "dagsim/error.h"
#include "dagsim/machine.h"
#include "dagsim/strategies.h"

using namespace dash;
using namespace dash::rt;

namespace {

sim::Problem grid_problem(int d, int s, bool causal) {
  sim::Problem p;
  p.head_dim = d;
  p.q_heads = p.kv_heads = 2048 / d;
  p.batch = 16384 / s;
  p.seqlen_q = p.seqlen_k = s;
  p.tile_m = kKernelTileM;
  p.tile_n = kKernelTileN;
  p.mask = causal ? sim::Mask{sim::MaskKind::kCausal, 0, 0} : sim::Mask{};
  return p;
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
  std::printf("grid determinism: %d runs per cell vs a first run, bitwise dQ dK dV (bf16); cell = runs that differ"
              " (atomic: runs that differ / most differing elements in a run); '-' = strategy refuses the shape\n",
              repeats);
  std::printf("%-4s %-6s %-6s", "d", "seqlen", "mask");
  for (auto const& m : modes) std::printf(" %15s", m.c_str());
  std::printf(" %22s\n", "atomic (fa3)");
  int failures = 0;
  for (int d : {64, 128}) {
    for (bool causal : {false, true}) {
      for (int s = 512; s <= 16384; s *= 2) {
        sim::Problem const p = grid_problem(d, s, causal);
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
                DASH_CUDA_CHECK(cudaMemcpy(ref16 + x * words_q, outs[x], words_q * 2, cudaMemcpyDeviceToDevice));
              }
              continue;
            }
            std::int64_t words = 0;
            for (int x = 0; x < 3; ++x) words += count_differing_words(outs[x], ref16 + x * words_q, words_q, nullptr);
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
        std::printf(" %8d/%-2d %11lld\n", at.runs_differ, repeats, static_cast<long long>(at.max_words));
        std::fflush(stdout);
      }
    }
  }
  std::printf("grid determinism: %s (%d deterministic cells differ)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 77;
  }
  if (argc > 1 && std::string(argv[1]) == "grid") {
    int const repeats = argc > 2 ? std::max(10, std::atoi(argv[2])) : 10;
    int sms = 0;
    DASH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return run_grid(repeats, sms);
  }
  bool const quick = argc > 1 && std::string(argv[1]) == "quick";
  struct Shape { int d; int s; bool causal; };
  std::vector<Shape> shapes = {{128, 1024, false}, {128, 4096, false}, {128, 8192, false},
                               {128, 1024, true},  {128, 4096, true},  {128, 8192, true},
                               {64, 1024, false},  {64, 4096, false},  {64, 4096, true}};
  if (quick) shapes = {{128, 8192, false}, {128, 8192, true}};
  int sms = 0;
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("%-4s %-6s %-6s %-16s %-13s %9s %9s\n", "d", "seqlen", "mask", "strategy", "mode", "ms", "TFLOP/s");
  for (auto const& sh : shapes) {
    sim::Problem p;
    p.head_dim = sh.d;
    p.q_heads = p.kv_heads = 2048 / sh.d;
    p.batch = 16384 / sh.s;
    p.seqlen_q = p.seqlen_k = sh.s;
    p.tile_m = kKernelTileM;
    p.tile_n = kKernelTileN;
    p.mask = sh.causal ? sim::Mask{sim::MaskKind::kCausal, 0, 0} : sim::Mask{};
    double const flops = 2.5 * 4.0 * p.batch * p.q_heads * double(sh.s) * sh.s * sh.d * (sh.causal ? 0.5 : 1.0);
    DType const dtype = DType::kBf16;
    float const scale = 1.f / std::sqrt(float(sh.d));
    std::vector<std::unique_ptr<test::DeviceTensors>> sets;
    for (int x = 0; x < 2; ++x) {
      sets.push_back(std::make_unique<test::DeviceTensors>(p, dtype));
      sets.back()->upload(test::random_inputs(p, dtype, 1000 + x));
    }
    Attention attn(p, dtype, scale);
    for (auto const& set : sets) attn.forward(set->tensors(), nullptr);
    std::vector<std::pair<std::string, Reduction>> runs;
    for (auto const& name : sim::strategy_names()) runs.emplace_back(name, Reduction::kDeterministic);
    runs.emplace_back("fa3", Reduction::kAtomic);
    cudaEvent_t start, stop;
    DASH_CUDA_CHECK(cudaEventCreate(&start));
    DASH_CUDA_CHECK(cudaEventCreate(&stop));
    for (auto const& [name, mode] : runs) {
      try {
        attn.set_schedule(sim::make_strategy(name, p, sim::machine_with_sms(sms)));
      } catch (UserError const& e) {
        continue;
      }
      for (int w = 0; w < 3; ++w) attn.backward(sets[w % 2]->tensors(), mode, nullptr);
      std::vector<float> ms;
      for (int r = 0; r < 10; ++r) {
        DASH_CUDA_CHECK(cudaEventRecord(start));
        attn.backward(sets[r % 2]->tensors(), mode, nullptr);
        DASH_CUDA_CHECK(cudaEventRecord(stop));
        DASH_CUDA_CHECK(cudaEventSynchronize(stop));
        float t = 0;
        DASH_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      float const med = 0.5f * (ms[4] + ms[5]);
      std::printf("%-4d %-6d %-6s %-16s %-13s %9.3f %9.1f\n", sh.d, sh.s, sh.causal ? "causal" : "full", name.c_str(),
                  mode == Reduction::kDeterministic ? "deterministic" : "atomic", med, flops / (med * 1e-3) / 1e12);
      std::fflush(stdout);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  return 0;
}

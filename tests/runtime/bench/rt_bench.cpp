// Times our backward (deterministic per strategy, and atomic) on DASH-grid shapes: CUDA events,
// warm-up apart, median of 10, two input sets alternated (each several times the 60 MB L2).
// Prints one line per measurement; TFLOP/s = 2.5 * 4 b h s_q s_k d, halved for causal.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../harness.h"
#include "dagsim/error.h"
#include "dagsim/machine.h"
#include "dagsim/strategies.h"

using namespace dash;
using namespace dash::rt;

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 77;
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

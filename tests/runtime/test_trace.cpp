// GPU tests of kernel traces (runtime/kernel_trace.h): in a DASH_KERNEL_TRACE build every step and
// work item of every CTA is recorded, in order, on the SM the CTA ran on, and tracing changes no
// bit of the gradients; in any other build asking for a trace is a UserError.
#include <cstdint>
#include <string>
#include <vector>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/strategies.h"
#include "harness.h"
#include "runtime/kernel_trace.h"
#include "tools/bench_trace.h"

namespace dash::rt::test {

TEST_CASE("kernel traces: every step recorded in order, gradients unchanged", "[gpu]") {
  sim::Problem p;
  p.batch = 2;
  p.q_heads = 4;
  p.kv_heads = 2;  // GQA: the dK/dV tickets run too
  p.seqlen_q = 700;
  p.seqlen_k = 900;
  p.head_dim = 128;
  p.mask = sim::Mask{sim::MaskKind::kCausal, 0, 0};
  AttentionInputs const in = random_inputs(p, DType::kBf16, 77);
  int sms = 0;
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (KernelFamily f : device_families()) {
    p.tile_m = family_tile_m(f, p.head_dim);
    p.tile_n = family_tile_n(f);
    Attention attn(p, DType::kBf16, 0.125f);
    sim::Schedule const s = sim::make_strategy("descending", p, sim::machine_with_sms(sms));
    attn.set_schedule(s, KernelChoice::kGeneric, f);
    if constexpr (!kKernelTraces) {
      CHECK_THROWS_WITH(attn.set_trace(true),
                        Catch::Contains("configure with -DDASH_KERNEL_TRACE=ON"));
      CHECK_THROWS_WITH(attn.read_trace(nullptr), Catch::Contains("no traced backward has run"));
      continue;
    }
    for (Reduction r : {Reduction::kDeterministic, Reduction::kAtomic}) {
      INFO(family_name(f) << (r == Reduction::kDeterministic ? " det" : " atomic"));
      DeviceTensors dev(p, DType::kBf16);
      dev.upload(in);
      attn.forward(dev.tensors(), nullptr);
      attn.backward(dev.tensors(), r, nullptr);
      std::vector<std::uint16_t> const plain = dev.grad_bits();
      attn.set_trace(true);
      dev.poison_backward(nullptr);
      attn.backward(dev.tensors(), r, nullptr);
      RawTrace const raw = attn.read_trace(nullptr);
      attn.set_trace(false);
      if (r == Reduction::kDeterministic) CHECK(dev.grad_bits() == plain);
      cli::KernelTrace const t =
          cli::decode_trace(raw, s);  // throws on a missing or disordered stamp
      REQUIRE(t.ctas.size() == s.ctas.size());
      std::int64_t steps = 0;
      for (std::size_t c = 0; c < t.ctas.size(); ++c) {
        cli::CtaTrace const& cta = t.ctas[c];
        CHECK(cta.sm >= 0);
        CHECK(cta.sm < sms);
        steps += static_cast<std::int64_t>(cta.steps.size());
        // Steps follow each other; each item starts after the previous one ended.
        for (std::size_t n = 1; n < cta.steps.size(); ++n) {
          CHECK(cta.steps[n].at[kStepEntry] >= cta.steps[n - 1].at[kStepEntry]);
          CHECK(cta.steps[n].at[kStepTaken] >= cta.steps[n - 1].at[kStepDone]);
        }
        for (std::size_t k = 1; k < cta.items.size(); ++k) {
          CHECK(cta.items[k].at[kItemWait] >= cta.items[k - 1].at[kItemEnd]);
        }
        for (auto const& step : cta.steps) CHECK(step.at[kStepDone] <= t.span_ns);
      }
      CHECK(steps == sim::count_steps(s));
      CHECK(t.span_ns > 0);
    }
  }
}

}  // namespace dash::rt::test

// Generated specializations (generated/*.cu) against the generic kernel they were made from: same
// problem, schedule and inputs must give the same dQ, dK, dV bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/strategies.h"
#include "harness.h"
#include "runtime/registry.h"

namespace dash::rt {
namespace {

/// The default set's shapes for a family (docs/codegen.md): batch 1, seqlen 8192, hidden 2048, full
/// and causal, the family's default tiles (80 rows at d128 full on sm90).
std::vector<sim::Problem> default_set_shapes(KernelFamily family) {
  std::vector<sim::Problem> shapes;
  for (int const d : {64, 128}) {
    for (bool const causal : {false, true}) {
      sim::Problem p;
      p.batch = 1;
      p.head_dim = d;
      p.q_heads = p.kv_heads = 2048 / d;
      p.seqlen_q = p.seqlen_k = 8192;
      p.tile_m = family_default_tile_m(family, d, causal);
      p.tile_n = family_tile_n(family);
      p.mask = causal ? sim::Mask{sim::MaskKind::kCausal, 0, 0} : sim::Mask{};
      shapes.push_back(p);
    }
  }
  return shapes;
}

}  // namespace

TEST_CASE("generated specializations equal the generic kernel bit for bit", "[gpu]") {
  // (schedule hash, family) of every specialization: one schedule may be specialized for several
  // families, each compared with its own family's generic kernel.
  std::vector<std::pair<std::uint64_t, KernelFamily>> special_hashes;
  std::vector<KernelFamily> const runs = test::device_families();
  for (auto const& k : registered_bwd_kernels()) {
    bool const here = std::find(runs.begin(), runs.end(), k.key.family) != runs.end();
    std::pair const entry{k.key.schedule_hash, k.key.family};
    if (k.key.schedule_hash != 0 && here &&
        std::find(special_hashes.begin(), special_hashes.end(), entry) == special_hashes.end()) {
      special_hashes.push_back(entry);
    }
  }
  if (special_hashes.empty()) {
    WARN("no generated specialization is built in (generated/ has no kernels): nothing to compare");
    return;
  }
  int sms = 0;
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int matched = 0;
  for (auto const& [special_hash, family] : special_hashes) {
    // The first strategy of the family's default-set shapes whose schedule has this hash.
    std::optional<std::pair<sim::Problem, sim::Schedule>> made;
    for (sim::Problem const& p : default_set_shapes(family)) {
      for (auto const& name : sim::strategy_names()) {
        if (made) break;
        try {
          sim::Schedule schedule = sim::make_strategy(name, p, sim::machine_with_sms(sms));
          if (schedule_hash(schedule) == special_hash) made.emplace(p, std::move(schedule));
        } catch (UserError const&) {
          // the strategy refuses this shape
        }
      }
    }
    if (!made) continue;
    ++matched;
    auto const& [p, schedule] = *made;
    INFO(family_name(family) << " d" << p.head_dim << (p.mask.kind == sim::MaskKind::kCausal ? " causal" : " full")
                             << " tile_m " << p.tile_m);
    Attention attn(p, DType::kBf16, 1.f / std::sqrt(float(p.head_dim)));
    test::DeviceTensors dev(p, DType::kBf16);
    dev.upload(test::random_inputs(p, DType::kBf16, 77));
    attn.forward(dev.tensors(), nullptr);

    attn.set_schedule(schedule, KernelChoice::kGeneric, family);
    std::string const generic_name = attn.kernel_name();
    dev.poison_backward(nullptr);
    attn.backward(dev.tensors(), Reduction::kDeterministic, nullptr);
    std::vector<std::uint16_t> const generic = dev.grad_bits();

    attn.set_schedule(schedule, KernelChoice::kAuto, family);  // the specialization of this hash
    CHECK(attn.kernel_name() != generic_name);
    dev.poison_backward(nullptr);
    attn.backward(dev.tensors(), Reduction::kDeterministic, nullptr);
    std::vector<std::uint16_t> const special = dev.grad_bits();
    REQUIRE(special.size() == generic.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < special.size(); ++i) differ += special[i] != generic[i] ? 1 : 0;
    CHECK(differ == 0);
    // Poisoned outputs that stayed NaN in both would compare equal: the gradients must be finite.
    std::size_t nan = 0;
    for (std::uint16_t const bits : special) nan += (bits & 0x7f80u) == 0x7f80u ? 1 : 0;
    CHECK(nan == 0);
  }
  if (sms != 132) {
    WARN("this GPU has " << sms
                         << " SMs; the default set was made for 132, so no schedule matches");
    return;
  }
  CHECK(matched == static_cast<int>(special_hashes.size()));
}

}  // namespace dash::rt

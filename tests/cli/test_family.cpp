// The kernel families' tiles (runtime/kernels/family.h): which Q tile a problem gets by default,
// which tiles each family runs, the model's dQ buffer depth at them and what `--kernel auto` picks.
#include <vector>

#include <catch2/catch.hpp>

#include "dagsim/core/mask.h"
#include "dagsim/core/problem.h"
#include "runtime/kernels/family.h"
#include "runtime/kernels/family_model.h"

using dash::rt::KernelFamily;

namespace {

/// 4 heads of 2048 at head dim 128 with `tile_m`-row Q tiles.
dash::sim::Problem d128(int tile_m) {
  dash::sim::Problem p;
  p.head_dim = 128;
  p.tile_m = tile_m;
  p.tile_n = 128;
  p.q_heads = p.kv_heads = 4;
  p.seqlen_q = p.seqlen_k = 2048;
  return p;
}

}  // namespace

TEST_CASE("family: the default Q tile depends on the family, the head dim and the mask", "[family]") {
  using dash::rt::family_default_tile_m;
  for (KernelFamily f : dash::rt::kAllFamilies) {
    CHECK(family_default_tile_m(f, 64, false) == 128);
    CHECK(family_default_tile_m(f, 64, true) == 128);
    CHECK(family_default_tile_m(f, 128, true) == 64);
  }
  // Without a mask at head dim 128 the sm90 family runs 80-row tiles; the portable one has none.
  CHECK(family_default_tile_m(KernelFamily::kSm90, 128, false) == 80);
  CHECK(family_default_tile_m(KernelFamily::kSm80, 128, false) == 64);
  // A window is a mask: 64 rows, as causal.
  dash::sim::Mask const window{dash::sim::MaskKind::kWindow, 256, 0};
  CHECK(dash::rt::default_tile_m(KernelFamily::kSm90, 128, window) == 64);
  CHECK(dash::rt::default_tile_m(KernelFamily::kSm90, 128, dash::sim::Mask{}) == 80);
}

TEST_CASE("family: the tiles each family runs", "[family]") {
  using dash::rt::family_has_tiles;
  CHECK(family_has_tiles(KernelFamily::kSm90, 128, 80, 128));
  CHECK(family_has_tiles(KernelFamily::kSm90, 128, 64, 128));
  CHECK_FALSE(family_has_tiles(KernelFamily::kSm80, 128, 80, 128));
  CHECK(family_has_tiles(KernelFamily::kSm80, 128, 64, 128));
  CHECK_FALSE(family_has_tiles(KernelFamily::kSm90, 64, 80, 128));
  CHECK_FALSE(family_has_tiles(KernelFamily::kSm90, 128, 80, 64));
  CHECK_FALSE(family_has_tiles(KernelFamily::kSm90, 128, 128, 128));
}

TEST_CASE("family: the model's dQ buffer depth is one at the sm90 80-row tile", "[family]") {
  dash::sim::KernelRates rates = dash::rt::family_model_rates(KernelFamily::kSm90);
  REQUIRE(rates.dq_buffer == 2);  // the built-in profile's, or the cap below could not show
  CHECK(dash::rt::family_model(d128(80), rates, KernelFamily::kSm90).dq_buffer == 1);
  CHECK(dash::rt::family_model(d128(64), rates, KernelFamily::kSm90).dq_buffer == 2);
  // A profile's smaller depth stays: the tile caps it, it does not set it.
  rates.dq_buffer = 0;
  CHECK(dash::rt::family_model(d128(80), rates, KernelFamily::kSm90).dq_buffer == 0);
}

TEST_CASE("family: measured records get the cap from their tiles alone", "[family]") {
  dash::sim::KernelRates const rates = dash::rt::family_model_rates(KernelFamily::kSm90);
  CHECK(dash::rt::tiles_model(d128(80), rates).dq_buffer == 1);
  CHECK(dash::rt::tiles_model(d128(80), rates) == dash::rt::family_model(d128(80), rates, KernelFamily::kSm90));
  CHECK(dash::rt::tiles_model(d128(64), rates) == dash::sim::default_model(d128(64), rates));
}

TEST_CASE("family: auto takes the first runnable family with the problem's tiles", "[family]") {
  using dash::rt::auto_family;
  std::vector<KernelFamily> const hopper{KernelFamily::kSm90, KernelFamily::kSm80};
  std::vector<KernelFamily> const ampere{KernelFamily::kSm80};
  std::vector<KernelFamily> const sm80_first{KernelFamily::kSm80, KernelFamily::kSm90};
  CHECK(auto_family(hopper, 128, 80, 128) == KernelFamily::kSm90);
  CHECK(auto_family(hopper, 128, 64, 128) == KernelFamily::kSm90);
  // Only the sm90 family has 80-row tiles, wherever it stands in the list.
  CHECK(auto_family(sm80_first, 128, 80, 128) == KernelFamily::kSm90);
  CHECK(auto_family(sm80_first, 128, 64, 128) == KernelFamily::kSm80);
  // None has them: the first, whose refusal names its tiles.
  CHECK(auto_family(ampere, 128, 80, 128) == KernelFamily::kSm80);
  CHECK_FALSE(auto_family(std::vector<KernelFamily>{}, 128, 64, 128).has_value());
  // A GPU's shapes are planned with the first runnable family, whose default tiles auto then picks
  // again for each shape.
  using dash::rt::planning_family;
  CHECK(planning_family(hopper) == KernelFamily::kSm90);
  CHECK(planning_family(ampere) == KernelFamily::kSm80);
  CHECK_FALSE(planning_family(std::vector<KernelFamily>{}).has_value());
  KernelFamily const f = *planning_family(hopper);
  for (bool causal : {false, true}) {
    for (int d : {64, 128}) {
      int const tile_m = dash::rt::family_default_tile_m(f, d, causal);
      CHECK(auto_family(hopper, d, tile_m, dash::rt::family_tile_n(f)) == f);
    }
  }
}

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "dagsim/handoff.h"
#include "dagsim/machine.h"
#include "dagsim/problem.h"
#include "dagsim/schedule.h"
#include "dagsim/strategies.h"
#include "dagsim/tile_index.h"
#include "dagsim/validate.h"

namespace {

using namespace dash::sim;

Problem grid_shape(int head_dim, int seqlen, MaskKind kind) {
  Problem p;
  p.batch = 16384 / seqlen;
  p.q_heads = p.kv_heads = 2048 / head_dim;
  p.seqlen_q = p.seqlen_k = seqlen;
  p.head_dim = head_dim;
  p.tile_m = 64;
  p.tile_n = 128;
  p.mask = Mask{kind, 0, 0};
  return p;
}

}  // namespace

TEST_CASE("tight_handoff_share counts hand-offs due at the same lock-step position or earlier") {
  // One head, 2 Q tiles x 2 KV tiles, one CTA per KV tile. Q tile 0: KV 0 at position 0, then
  // KV 1 at position 1 (staggered). Q tile 1: KV 0 at position 1, then KV 1 at position 0 (tight).
  Problem p;
  p.seqlen_q = 128;
  p.seqlen_k = 256;
  p.tile_m = 64;
  p.tile_n = 128;
  Schedule s;
  s.ctas = {Cta{{WorkItem{0, 0, 0, {0, 1}}}}, Cta{{WorkItem{0, 0, 1, {1, 0}}}}};
  s.dq_order = {{0, 1}, {0, 1}};
  validate(p, machine_with_sms(2), s);
  CHECK(tight_handoff_share(p, s) == 0.5);
  s.dq_order = {{0, 1}, {1, 0}};  // Q tile 1 now takes KV 1 (position 0) first: both staggered
  validate(p, machine_with_sms(2), s);
  CHECK(tight_handoff_share(p, s) == 0.0);
  s.ctas[1].items[0].q_order = {0, 1};  // side by side: each hand-off due at the same position
  s.dq_order = {{0, 1}, {0, 1}};
  validate(p, machine_with_sms(2), s);
  CHECK(tight_handoff_share(p, s) == 1.0);

  p.seqlen_k = 128;  // one KV tile: no hand-off at all
  Schedule one;
  one.ctas = {Cta{{WorkItem{0, 0, 0, {0, 1}}}}};
  one.dq_order = {{0}, {0}};
  validate(p, machine_with_sms(1), one);
  CHECK(tight_handoff_share(p, one) == 0.0);
}

TEST_CASE("tight_handoff_share separates staggered from side-by-side strategies on the DASH grid") {
  Machine const h200 = machine_with_sms(132);
  for (int d : {64, 128}) {
    for (int seqlen : {1024, 8192}) {
      INFO("head_dim " << d << ", seqlen " << seqlen);
      Problem const full = grid_shape(d, seqlen, MaskKind::kFull);
      Problem const causal = grid_shape(d, seqlen, MaskKind::kCausal);
      CHECK(tight_handoff_share(full, make_strategy("shift", full, h200)) <= 0.25);
      CHECK(tight_handoff_share(causal, make_strategy("shift", causal, h200)) <= 0.25);
      CHECK(tight_handoff_share(full, make_strategy("fa3", full, h200)) > 0.9);
      CHECK(tight_handoff_share(causal, make_strategy("descending", causal, h200)) > 0.5);
    }
  }
}

TEST_CASE("TileIndex::dq_kv_offsets gives each dQ tile its batch's KV tiles, varlen too") {
  Problem p;
  p.batch = 2;
  p.q_heads = p.kv_heads = 2;
  p.tile_m = 64;
  p.tile_n = 128;
  p.seqlens_q = {128, 64};   // 2 and 1 Q tiles
  p.seqlens_k = {384, 128};  // 3 and 1 KV tiles
  TileIndex const index(p);
  auto const offsets = index.dq_kv_offsets();
  // dQ tiles: batch 0 has 2 heads x 2 Q tiles (3 slots each), batch 1 has 2 heads x 1 (1 slot).
  CHECK(offsets == std::vector<std::int64_t>{0, 3, 6, 9, 12, 13, 14});
}

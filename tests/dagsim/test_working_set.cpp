// The working set of a schedule (dagsim/model/working_set.h): heads (batch, q head) in progress by the step clock.
#include <catch2/catch.hpp>

#include "dagsim/core/error.h"
#include "dagsim/core/machine.h"
#include "dagsim/core/strategies.h"
#include "dagsim/model/working_set.h"
#include "fixtures.h"
#include "tests/shape.h"

using namespace dash::sim;
using dash::sim::testing::grid;
using dash::sim::testing::make;

namespace {

WorkItem item(int batch, int head, int steps) {
  WorkItem w;
  w.batch = batch;
  w.head = head;
  for (int i = 0; i < steps; ++i) w.q_order.push_back(i);
  return w;
}

Problem grid_shape(int batch, int heads, int seqlen, int head_dim) {
  return dash::test::kernel_shape(batch, heads, seqlen, head_dim, parse_mask("causal"));
}

}  // namespace

TEST_CASE("working set: heads and bytes in progress by each CTA's step clock", "[working_set]") {
  Problem p = grid(4, 4, 2, 2);
  p.batch = 2;
  p.head_dim = 64;
  // CTA 0: (b0, h0) for clocks 0-1, (b0, h1) for 2-3. CTA 1: (b0, h0) at 0, (b1, h0) for 1-3, then
  // an item without steps (holds nothing).
  Schedule const s = make({{item(0, 0, 2), item(0, 1, 2)}, {item(0, 0, 1), item(1, 0, 3), item(1, 1, 0)}}, {});
  WorkingSet const ws = working_set(p, s, 2);
  CHECK(ws.clocks == 4);
  CHECK(ws.max_heads == 2);     // clocks 1-3
  CHECK(ws.median_heads == 2);  // 1 head at clock 0, 2 at clocks 1, 2, 3
  std::int64_t const per_head = 256 * 64 * (2 + 2 + 4);
  CHECK(ws.max_bytes == 2 * per_head);
  CHECK(ws.median_bytes == 2 * per_head);
  // fp32 inputs (4-byte elements) weigh more.
  CHECK(working_set(p, s, 2, 4).max_bytes == 2 * 256 * 64 * (4 + 4 + 4));
}

TEST_CASE("working set: a dynamic launch starts each CTA where a resident one ends", "[working_set]") {
  Problem p = grid(4, 4, 3, 3);
  p.head_dim = 64;
  // Three one-item CTAs on two slots: h0 (3 steps) and h1 (1 step) start at once, h2 where h1 ends.
  Schedule const s = make({{item(0, 0, 3)}, {item(0, 1, 1)}, {item(0, 2, 2)}}, {}, {}, LaunchModel::kDynamic);
  WorkingSet const two = working_set(p, s, 2);
  CHECK(two.clocks == 3);
  CHECK(two.max_heads == 2);
  WorkingSet const one = working_set(p, s, 1);  // one at a time
  CHECK(one.clocks == 6);
  CHECK(one.max_heads == 1);
  WorkingSet const three = working_set(p, s, 3);  // all at once
  CHECK(three.max_heads == 3);
  CHECK_THROWS_AS(working_set(p, s, 0), dash::UserError);
  CHECK_THROWS_AS(working_set(p, s, 2, 0), dash::UserError);
}

// The figures of docs/results/2026-12-04-h200-pytorch-op.md (symmetric-shift on the H200's 132
// SMs keeps 17 and 5 heads (batch, q head) in progress at d128 causal 2k and 8k, 2 and 8 MiB each).
TEST_CASE("working set: symmetric-shift keeps few heads in progress on the causal grid", "[working_set]") {
  Machine const h200 = machine_preset("h200");
  Problem const p2k = grid_shape(8, 16, 2048, 128);
  WorkingSet const a = working_set(p2k, make_strategy("symmetric-shift", p2k, h200), h200.sms);
  CHECK(a.max_heads == 17);
  CHECK(a.max_bytes == 17 * (std::int64_t{2} << 20));
  Problem const p8k = grid_shape(2, 16, 8192, 128);
  WorkingSet const b = working_set(p8k, make_strategy("symmetric-shift", p8k, h200), h200.sms);
  CHECK(b.max_heads == 5);
  CHECK(b.max_bytes == 5 * (std::int64_t{8} << 20));
  // fa3's order deals every head's tiles across the machine: more heads at once.
  WorkingSet const c = working_set(p2k, make_strategy("fa3", p2k, h200), h200.sms);
  CHECK(c.max_heads > a.max_heads);
}

// Lowering: closed forms verified against the schedule (fall back to tables when they do not hold),
// hash stability, JSON round-trip, invalid schedules refused.
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "codegen/kernel_spec.h"
#include "codegen/lower.h"
#include "codegen/specialize.h"
#include "codegen/verify.h"
#include "dagsim/core/error.h"
#include "dagsim/core/strategies.h"
#include "runtime/kernels/family.h"

namespace cg = dash::codegen;
namespace sim = dash::sim;

namespace {

/// Full mask, 2 heads, 4 Q tiles x 2 KV tiles, 4 CTAs: FA3's order written out by hand.
struct Small {
  sim::Problem problem;
  sim::Machine machine = sim::machine_with_sms(4);
  sim::Schedule schedule;
  Small() {
    problem.q_heads = problem.kv_heads = 2;
    problem.seqlen_q = problem.seqlen_k = 256;
    problem.head_dim = 128;
    problem.mask = sim::Mask{sim::MaskKind::kFull, 0, 0};
    schedule.strategy = "fa3";
    schedule.ctas.resize(4);
    for (int s = 0; s < 4; ++s) {  // item s = (head s / 2, KV tile s % 2) on CTA s
      schedule.ctas[s].items.push_back(sim::WorkItem{0, s / 2, s % 2, {0, 1, 2, 3}});
    }
    schedule.dq_order.assign(8, {0, 1});
  }
};

}  // namespace

TEST_CASE("fa3 written out by hand lowers to closed forms", "[codegen][cpu]") {
  Small const t;
  auto const spec = cg::lower(t.problem, t.machine, t.schedule);
  CHECK(spec.form.name == "fa3");
  CHECK(spec.form.work.kind == cg::WorkKind::kStrided);
  CHECK(spec.form.work.head_fastest == 0);
  CHECK(spec.form.work.reverse == 0);
  CHECK(spec.form.q_order.kind == cg::QOrderKind::kAscending);
  CHECK(spec.form.dq_rank.kind == cg::RankKind::kAscending);
  CHECK(spec.form.dkv_rank.kind == cg::RankKind::kNone);
  CHECK(spec.grid == 4);
  CHECK(spec.q_tiles == 4);
  CHECK(spec.kv_tiles == 2);
  CHECK(spec.form.q_lo == std::vector<int>{0, 0});
  CHECK(spec.form.q_hi == std::vector<int>{3, 3});
  // The host evaluation answers the protocol exactly as the schedule does.
  auto const item = cg::eval_work(spec, spec.form.work, 3, 0);
  REQUIRE(item);
  CHECK(*item == cg::WorkCoord{0, 1, 1});
  CHECK_FALSE(cg::eval_work(spec, spec.form.work, 3, 1));
  CHECK(cg::eval_q_tile(spec, spec.form, *item, 2) == 2);
  CHECK(cg::eval_dq_rank(spec, spec.form, 0, 1, 2, 1) == 1);
}

TEST_CASE("a closed form that does not reproduce the schedule is caught", "[codegen][cpu]") {
  Small const t;
  auto spec = cg::lower(t.problem, t.machine, t.schedule);
  REQUIRE(cg::form_mismatch(spec, t.schedule).empty());
  auto tampered = spec;
  tampered.form.q_order.kind = cg::QOrderKind::kDescending;
  CHECK_THAT(cg::form_mismatch(tampered, t.schedule), Catch::Contains("expected Q tile 0"));
  tampered = spec;
  tampered.form.dq_rank.kind = cg::RankKind::kDescending;
  CHECK_THAT(cg::form_mismatch(tampered, t.schedule), Catch::Contains("should have rank 0"));
  tampered = spec;
  tampered.form.work.reverse = 1;
  CHECK_THAT(cg::form_mismatch(tampered, t.schedule), Catch::Contains("CTA 0 item 0"));
}

TEST_CASE("a tampered schedule falls back to tables for exactly the broken part", "[codegen][cpu]") {
  Small t;
  t.schedule.ctas[3].items[0].q_order = {1, 0, 2, 3};  // one walk is no longer ascending
  auto const spec = cg::lower(t.problem, t.machine, t.schedule);
  CHECK(spec.form.work.kind == cg::WorkKind::kStrided);
  CHECK(spec.form.q_order.kind == cg::QOrderKind::kTable);
  CHECK(spec.form.dq_rank.kind == cg::RankKind::kAscending);
  CHECK(spec.form.name == "fa3+table");
  CHECK(cg::form_mismatch(spec, t.schedule).empty());
  // Two distinct walks, deduplicated: rows {0,1,2,3} and {1,0,2,3}.
  CHECK(spec.form.q_order.rows == std::vector<int>{0, 1, 2, 3, 1, 0, 2, 3});
  CHECK(spec.form.q_order.item_row == std::vector<int>{0, 0, 0, 1});

  Small ranks;
  ranks.schedule.dq_order[5] = {1, 0};  // one dQ tile reduced in another order
  auto const spec2 = cg::lower(ranks.problem, ranks.machine, ranks.schedule);
  CHECK(spec2.form.dq_rank.kind == cg::RankKind::kTable);
  CHECK(spec2.form.q_order.kind == cg::QOrderKind::kAscending);
  CHECK(cg::eval_dq_rank(spec2, spec2.form, 0, 1, 1, 0) == 1);
  CHECK(cg::eval_dq_rank(spec2, spec2.form, 0, 1, 2, 0) == 0);

  // A full table form follows the schedule too.
  auto table = spec;
  table.form = cg::table_form(spec, t.schedule);
  CHECK(cg::form_mismatch(table, t.schedule).empty());
}

TEST_CASE("an invalid schedule is refused before lowering", "[codegen][cpu]") {
  Small t;
  t.schedule.ctas[0].items[0].q_order = {0, 1, 2};  // step (i=3, j=0) of head 0 never runs
  CHECK_THROWS_AS(cg::lower(t.problem, t.machine, t.schedule), dash::UserError);
  Small u;
  CHECK_THROWS_WITH(cg::lower(u.problem, u.machine, u.schedule, "fp8"),
                    Catch::Contains("unknown dtype 'fp8'"));
}

TEST_CASE("shapes the template has no kernel for are refused", "[codegen][cpu]") {
  Small t;
  t.problem.head_dim = 96;
  CHECK_THROWS_WITH(cg::lower(t.problem, t.machine, t.schedule),
                    Catch::Contains("head-dim 96 has no kernel"));
  // Same steps with 64x64 tiles: a valid schedule, but not the template's 64x128 tiles.
  Small u;
  u.problem.tile_n = 64;
  u.problem.seqlen_k = 128;
  CHECK_THROWS_WITH(cg::lower(u.problem, u.machine, u.schedule),
                    Catch::Contains("tiles 64x64 have no kernel"));
  // head_dim 64 takes 128-row Q tiles: the 64-row tiles of head_dim 128 are refused there.
  Small v;
  v.problem.head_dim = 64;
  CHECK_THROWS_WITH(
      cg::lower(v.problem, v.machine, v.schedule),
      Catch::Contains(
          "tiles 64x128 have no kernel: the sm80 kernels' tiles at head-dim 64 are 128x128"));
  // At head dim 128 the sm90 family names both of its Q tiles.
  Small w;
  w.problem.tile_m = 96;
  cg::LowerOptions sm90;
  sm90.family = dash::rt::KernelFamily::kSm90;
  CHECK_THROWS_WITH(cg::lower(w.problem, w.machine, sim::make_strategy("fa3", w.problem, w.machine), "bf16", sm90),
                    Catch::Contains("the sm90 kernels' tiles at head-dim 128 are 64x128 or 80x128"));
}

TEST_CASE("spec and schedule hashes are stable and sensitive", "[codegen][cpu]") {
  Small const t;
  auto const a = cg::lower(t.problem, t.machine, t.schedule);
  auto const b = cg::lower(t.problem, t.machine, t.schedule);
  CHECK(cg::spec_hash(a) == cg::spec_hash(b));
  CHECK(a.schedule_hash.size() == 16);
  // FNV-1a 64 of the empty string and of "a": the published test vectors.
  CHECK(cg::hex64(cg::fnv1a64("")) == "cbf29ce484222325");
  CHECK(cg::hex64(cg::fnv1a64("a")) == "af63dc4c8601ec8c");

  Small other;
  other.schedule.dq_order[5] = {1, 0};
  auto const c = cg::lower(other.problem, other.machine, other.schedule);
  CHECK(c.schedule_hash != a.schedule_hash);
  CHECK(cg::spec_hash(c) != cg::spec_hash(a));
  auto const fp16 = cg::lower(t.problem, t.machine, t.schedule, "fp16");
  CHECK(fp16.schedule_hash == a.schedule_hash);
  CHECK(cg::spec_hash(fp16) != cg::spec_hash(a));
  CHECK(sim::schedule_hash(t.schedule) == std::stoull(a.schedule_hash, nullptr, 16));
}

TEST_CASE("KernelSpec JSON round-trips and rejects malformed input", "[codegen][cpu]") {
  Small t;
  t.schedule.ctas[3].items[0].q_order = {1, 0, 2, 3};
  auto const spec = cg::lower(t.problem, t.machine, t.schedule);
  auto const text = cg::to_json(spec);
  auto const back = cg::spec_from_json(text);
  CHECK(back == spec);
  CHECK(cg::to_json(back) == text);
  CHECK_THROWS_AS(cg::spec_from_json("{\"gpu\": 3}"), dash::UserError);
  CHECK_THROWS_AS(cg::spec_from_json("not json"), dash::UserError);
  // The dtype is spelled "bf16" or "fp16"; any other spelling is refused, not read as bf16.
  REQUIRE(text.find("\"dtype\":\"bf16\"") != std::string::npos);
  std::string fp8 = text;
  fp8.replace(fp8.find("\"dtype\":\"bf16\""), 14, "\"dtype\":\"fp8\"");
  CHECK_THROWS_WITH(cg::spec_from_json(fp8), Catch::Contains("dtype must be"));
  // Each form kind is one of its spellings, else refused (not read as a default).
  std::string const work = "\"work\":{\"begin\"";
  REQUIRE(text.find(work) != std::string::npos);
  auto const with = [&](std::string const& from, std::string const& to) {  // in the work form
    std::string changed = text;
    auto const at = changed.find(from, changed.find(work));
    REQUIRE(at != std::string::npos);
    return changed.replace(at, from.size(), to);
  };
  std::string const kind = "\"kind\":\"" + std::string(cg::to_string(spec.form.work.kind)) + "\"";
  CHECK_THROWS_WITH(cg::spec_from_json(with(kind, "\"kind\":\"spiral\"")),
                    Catch::Contains("unknown work kind 'spiral'"));
  CHECK_THROWS_WITH(cg::spec_from_json(with(kind, "\"kind\":7")),
                    Catch::Contains("must be a string"));
  for (auto const k :
       {cg::RankKind::kAscending, cg::RankKind::kDescending, cg::RankKind::kRotate,
        cg::RankKind::kLockstep, cg::RankKind::kWaves, cg::RankKind::kTable, cg::RankKind::kNone}) {
    CHECK(cg::parse_rank_kind(cg::to_string(k)) == k);
  }
  for (auto const k : {cg::QOrderKind::kAscending, cg::QOrderKind::kDescending,
                       cg::QOrderKind::kRotate, cg::QOrderKind::kTable}) {
    CHECK(cg::parse_q_order_kind(cg::to_string(k)) == k);
  }
  for (auto const k : {cg::WorkKind::kStrided, cg::WorkKind::kPaired, cg::WorkKind::kTable}) {
    CHECK(cg::parse_work_kind(cg::to_string(k)) == k);
  }
  CHECK_THROWS_WITH(cg::parse_rank_kind("Table"), Catch::Contains("known: ascending, descending"));
  // The mask and the launch are spelled as the simulator spells them, else refused.
  auto const swap = [&](std::string const& from, std::string const& to) {
    std::string changed = text;
    auto const at = changed.find(from);
    REQUIRE(at != std::string::npos);
    return changed.replace(at, from.size(), to);
  };
  std::string const mask = "\"mask\":\"" + std::string(sim::to_string(spec.mask)) + "\"";
  CHECK_THROWS_WITH(cg::spec_from_json(swap(mask, "\"mask\":\"Causal\"")),
                    Catch::Contains("unknown mask kind 'Causal'"));
  std::string const launch = "\"launch\":\"" + sim::to_string(spec.launch) + "\"";
  CHECK_THROWS_WITH(cg::spec_from_json(swap(launch, "\"launch\":\"eager\"")),
                    Catch::Contains("eager"));
  std::string fp16 = text;
  fp16.replace(fp16.find("\"dtype\":\"bf16\""), 14, "\"dtype\":\"fp16\"");
  CHECK(cg::spec_from_json(fp16).dtype == dash::rt::DType::kFp16);
}

TEST_CASE("every named strategy lowers to a form that follows it exactly", "[codegen][cpu]") {
  struct Shape {
    int heads, kv_heads, seqlen_q, seqlen_k, sms;
    sim::MaskKind mask;
    int head_dim = 128;
  };
  // head_dim 64 takes 128x128 tiles: square, so symmetric-shift's exact construction applies.
  auto const shape = GENERATE(Shape{4, 4, 1024, 1024, 132, sim::MaskKind::kFull},
                              Shape{4, 4, 1024, 1024, 132, sim::MaskKind::kCausal},
                              Shape{3, 3, 896, 640, 7, sim::MaskKind::kCausal},
                              Shape{8, 2, 768, 768, 10, sim::MaskKind::kFull},
                              Shape{2, 2, 1000, 1000, 5, sim::MaskKind::kCausal},
                              Shape{4, 4, 1024, 1024, 132, sim::MaskKind::kCausal, 64},
                              Shape{3, 3, 1152, 1152, 7, sim::MaskKind::kCausal, 64},
                              Shape{8, 2, 768, 768, 10, sim::MaskKind::kFull, 64},
                              Shape{2, 2, 1000, 1000, 5, sim::MaskKind::kCausal, 64});
  sim::Problem problem;
  problem.head_dim = shape.head_dim;
  problem.tile_m = dash::rt::family_tile_m(dash::rt::KernelFamily::kSm80, shape.head_dim);
  problem.q_heads = shape.heads;
  problem.kv_heads = shape.kv_heads;
  problem.seqlen_q = shape.seqlen_q;
  problem.seqlen_k = shape.seqlen_k;
  problem.mask.kind = shape.mask;
  auto const machine = sim::machine_with_sms(shape.sms);
  for (auto const& name : sim::strategy_names()) {
    sim::Schedule schedule;
    try {
      schedule = sim::make_strategy(name, problem, machine);
    } catch (dash::UserError const&) {
      continue;  // a strategy may refuse a shape outside its premise
    }
    CAPTURE(name, shape.heads, shape.seqlen_q, shape.sms, shape.head_dim);
    auto const spec = cg::lower(problem, machine, schedule);
    CHECK(cg::form_mismatch(spec, schedule).empty());
    CHECK(spec.strategy == name);
    cg::LowerOptions counting;
    counting.count_lockstep = true;
    auto const counted = cg::lower(problem, machine, schedule, "bf16", counting);
    CHECK(cg::form_mismatch(counted, schedule).empty());
  }
}

TEST_CASE("fa3 and fa3-spt lower to closed forms on the H200 shape", "[codegen][cpu]") {
  sim::Problem problem;
  problem.q_heads = problem.kv_heads = 16;
  problem.seqlen_q = problem.seqlen_k = 8192;
  problem.mask.kind = sim::MaskKind::kCausal;
  auto const machine = sim::machine_preset("h200");
  for (auto const& name : {"fa3", "fa3-spt"}) {
    auto const spec = cg::lower(problem, machine, sim::make_strategy(name, problem, machine));
    CAPTURE(name, spec.form.work.kind, spec.form.q_order.kind, spec.form.dq_rank.kind);
    CHECK(spec.form.name == name);
    CHECK(spec.form.work.kind == cg::WorkKind::kStrided);
    CHECK(spec.form.work.reverse == (std::string(name) == "fa3-spt" ? 1 : 0));
    CHECK(spec.form.dq_rank.kind ==
          (std::string(name) == "fa3-spt" ? cg::RankKind::kDescending : cg::RankKind::kAscending));
  }
  // descending places items greedily by load (no closed form): its walks are closed, its work table.
  auto const desc = cg::lower(problem, machine, sim::make_strategy("descending", problem, machine));
  CHECK(desc.form.q_order.kind == cg::QOrderKind::kDescending);
  CHECK(desc.form.work.kind == cg::WorkKind::kTable);
  CHECK(desc.form.name == "descending+table");
  // shift on a full mask: KV tile j starts at Q tile 2j (128 Q tiles, 64 KV tiles).
  problem.mask.kind = sim::MaskKind::kFull;
  auto const shift = cg::lower(problem, machine, sim::make_strategy("shift", problem, machine));
  CHECK(shift.form.q_order.kind == cg::QOrderKind::kRotate);
  CHECK(shift.form.q_order.mult == 2);
  CHECK(shift.form.q_order.offset == 0);
}

TEST_CASE("shift and symmetric-shift lower to closed forms on the H200 shapes", "[codegen][cpu]") {
  auto const machine = sim::machine_preset("h200");
  cg::LowerOptions tables;
  tables.wave_ranks = false;
  cg::LowerOptions counting = tables;
  counting.count_lockstep = true;
  for (int const head_dim : {64, 128}) {
    sim::Problem problem;
    problem.head_dim = head_dim;
    problem.tile_m = dash::rt::family_tile_m(dash::rt::KernelFamily::kSm80, head_dim);
    problem.q_heads = problem.kv_heads = head_dim == 64 ? 32 : 16;
    problem.seqlen_q = problem.seqlen_k = 8192;
    problem.mask.kind = sim::MaskKind::kFull;
    CAPTURE(head_dim);
    // 64 KV tiles; 128 Q tiles of 64 rows at head_dim 128 (KV tile j starts at Q tile 2j), 64 of
    // 128 rows at head_dim 64 (at Q tile j).
    int const q_tiles = 8192 / problem.tile_m;
    int const mult = q_tiles / 64;
    // shift, full mask: items (h, j) dealt round-robin over 132 CTAs, every item q_tiles steps;
    // the lock-step ranks cut across waves, so only the wave and counting forms follow them.
    auto const schedule = sim::make_strategy("shift", problem, machine);
    auto const by_default = cg::lower(problem, machine, schedule);
    CHECK(by_default.form.name == "shift");
    CHECK(by_default.form.q_order.kind == cg::QOrderKind::kRotate);
    CHECK(by_default.form.q_order.mult == mult);
    CHECK(by_default.form.dq_rank.kind == cg::RankKind::kWaves);
    CHECK(cg::lower(problem, machine, schedule, "bf16", tables).form.name == "shift+table");
    auto const shift = cg::lower(problem, machine, schedule, "bf16", counting);
    CHECK(shift.form.name == "shift");
    CHECK(shift.form.work.kind == cg::WorkKind::kStrided);
    CHECK(shift.form.dq_rank.kind == cg::RankKind::kLockstep);
    CHECK(shift.form.dq_rank.unit_steps == q_tiles);
    // The wave or counting form is needed: the rotate closed form, tried first, does not hold.
    auto rotate = shift;
    rotate.form.dq_rank = cg::RankForm{};
    rotate.form.dq_rank.kind = cg::RankKind::kRotate;
    rotate.form.dq_rank.mult = mult;
    rotate.form.dq_rank.modulus = shift.q_tiles;
    rotate.form.dq_rank.div = mult;
    CHECK_FALSE(cg::dq_rank_mismatch(rotate, rotate.form, schedule).empty());
    // A unit length that all but ignores the waves (step order alone) is caught.
    auto tampered = shift;
    tampered.form.dq_rank.unit_steps = 1;
    CHECK_THAT(cg::form_mismatch(tampered, schedule), Catch::Contains("should have rank"));

    problem.mask.kind = sim::MaskKind::kCausal;
    auto const sym_schedule = sim::make_strategy("symmetric-shift", problem, machine);
    auto const sym = cg::lower(problem, machine, sym_schedule, "bf16", counting);
    auto const sym_default = cg::lower(problem, machine, sym_schedule);
    CHECK(sym_default.form.work.kind == cg::WorkKind::kPaired);
    CHECK(sym_default.form.dq_rank.kind == cg::RankKind::kTable);
    CHECK(sym_default.form.name == "symmetric-shift+table");
    CHECK(sym.form.work.kind == cg::WorkKind::kPaired);
    auto const second = cg::eval_work(sym, sym.form.work, 5, 1);
    REQUIRE(second);
    CHECK(*second == cg::WorkCoord{0, 0, 63 - 5});
    auto strided = sym;
    strided.form.work = cg::WorkForm{};
    strided.form.work.kind = cg::WorkKind::kStrided;
    CHECK_THAT(cg::form_mismatch(strided, sym_schedule), Catch::Contains("CTA 0 item 1"));
    // The exact construction at both head dims (k = 1 Q tile per KV tile at head_dim 64, k = 2 at
    // 128): the first walk of a pair is a rotation and an ascending tail, which no Q form follows;
    // its dQ ranks follow no closed form either.
    CHECK(sym.form.name == "symmetric-shift+table");
    CHECK(sym.form.q_order.kind == cg::QOrderKind::kTable);
    CHECK(sym.form.dq_rank.kind == cg::RankKind::kTable);
    CHECK(sym.form.dq_rank.unit_steps == 0);
  }
}

TEST_CASE("lock-step ranks fall back to a table when the schedule's ranks differ", "[codegen][cpu]") {
  sim::Problem problem;
  problem.q_heads = problem.kv_heads = 4;
  problem.seqlen_q = problem.seqlen_k = 1024;
  problem.mask.kind = sim::MaskKind::kFull;
  auto const machine = sim::machine_with_sms(6);
  cg::LowerOptions counting;
  counting.wave_ranks = false;
  counting.count_lockstep = true;
  auto schedule = sim::make_strategy("shift", problem, machine);
  REQUIRE(cg::lower(problem, machine, schedule, "bf16", counting).form.dq_rank.kind ==
          cg::RankKind::kLockstep);
  std::swap(schedule.dq_order[3][0], schedule.dq_order[3][1]);
  auto const spec = cg::lower(problem, machine, schedule, "bf16", counting);
  CHECK(spec.form.dq_rank.kind == cg::RankKind::kTable);
  CHECK(spec.form.name == "shift+table");
  CHECK(cg::form_mismatch(spec, schedule).empty());
}

TEST_CASE("wave ranks: shift's lock-step order in closed form, exact where offered",
          "[codegen][cpu]") {
  cg::LowerOptions tables;
  tables.wave_ranks = false;
  // Grid shapes and other SM counts: KV tiles of one head split over two waves, or not at all.
  for (int const sms : {132, 114, 78, 8}) {
    for (int const head_dim : {64, 128}) {
      for (int const seqlen : {512, 1024, 2048, 4096, 8192, 16384}) {
        sim::Problem problem;
        problem.head_dim = head_dim;
        problem.tile_m = dash::rt::family_tile_m(dash::rt::KernelFamily::kSm80, head_dim);
        problem.q_heads = problem.kv_heads = 2048 / head_dim;
        problem.batch = 16384 / seqlen;
        problem.seqlen_q = problem.seqlen_k = seqlen;
        problem.mask.kind = sim::MaskKind::kFull;
        auto const machine = sim::machine_with_sms(sms);
        CAPTURE(sms, head_dim, seqlen);
        auto const schedule = sim::make_strategy("shift", problem, machine);
        auto const by_tables = cg::lower(problem, machine, schedule, "bf16", tables).form.dq_rank.kind;
        auto const spec = cg::lower(problem, machine, schedule);
        if (by_tables == cg::RankKind::kRotate) {
          // One wave per head (as many CTAs as KV tiles): the plainer rotate form, tried first.
          CHECK(spec.form.dq_rank.kind == cg::RankKind::kRotate);
          continue;
        }
        // Without the option the rank is a table. With it (the default), offered and accepted only
        // if it reproduces every rank of the schedule.
        CHECK(by_tables == cg::RankKind::kTable);
        CHECK(spec.form.dq_rank.kind == cg::RankKind::kWaves);
        CHECK(spec.form.name == "shift");
        CHECK(cg::form_mismatch(spec, schedule).empty());
        // Same ranks as the counting form, contribution by contribution.
        auto counting = spec;
        counting.form.dq_rank = cg::RankForm{};
        counting.form.dq_rank.kind = cg::RankKind::kLockstep;
        counting.form.dq_rank.unit_steps = spec.q_tiles;
        CHECK(cg::dq_rank_mismatch(counting, counting.form, schedule).empty());
        // A wrong offset is caught.
        auto tampered = spec;
        tampered.form.dq_rank.offset += 1;
        CHECK_FALSE(cg::dq_rank_mismatch(tampered, tampered.form, schedule).empty());
      }
    }
  }
  // Not offered where its premise fails: a causal mask (walks of different lengths).
  sim::Problem causal;
  causal.q_heads = causal.kv_heads = 16;
  causal.seqlen_q = causal.seqlen_k = 8192;
  causal.mask.kind = sim::MaskKind::kCausal;
  auto const machine = sim::machine_preset("h200");
  auto const spec = cg::lower(causal, machine, sim::make_strategy("shift", causal, machine));
  CHECK(spec.form.dq_rank.kind != cg::RankKind::kWaves);
  CHECK(cg::form_mismatch(spec, sim::make_strategy("shift", causal, machine)).empty());
}

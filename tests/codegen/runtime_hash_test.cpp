// Codegen's registry key must be the runtime's: otherwise a generated kernel is never dispatched.
#include <catch2/catch.hpp>

#include "codegen/specialize.h"
#include "dagsim/strategies.h"

#if DASH_HAVE_RT
#include "runtime/attention.h"
#endif

namespace sim = dash::sim;

TEST_CASE("codegen's schedule hash is the runtime registry's", "[codegen][cpu]") {
#if DASH_HAVE_RT
  sim::Problem problem;
  problem.q_heads = 4;
  problem.kv_heads = 2;
  problem.seqlen_q = problem.seqlen_k = 1024;
  problem.mask.kind = sim::MaskKind::kCausal;
  auto const machine = sim::machine_with_sms(9);
  for (auto const& name : sim::strategy_names()) {
    for (auto const launch : {sim::LaunchModel::kPersistent, sim::LaunchModel::kDynamic}) {
      auto const schedule = sim::make_strategy(name, problem, machine, launch);
      CAPTURE(name);
      CHECK(dash::codegen::protocol_schedule_hash(schedule) == dash::rt::schedule_hash(schedule));
    }
  }
#else
  // Without the CUDA runtime there is nothing to compare against; the protocol's definition is
  // still pinned by a value computed by hand from docs/schedule-protocol.md.
  sim::Schedule empty;
  // Two int64 zeros (launch, CTA count) then two zeros (dq_order, dkv_order sizes).
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (int n = 0; n < 32; ++n) h = (h ^ 0U) * 0x100000001b3ULL;
  CHECK(dash::codegen::protocol_schedule_hash(empty) == h);
#endif
}

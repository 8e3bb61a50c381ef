// Schedule helpers: the protocol hash (the registry key of generated kernels).
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "dagsim/core/rank_order.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/strategies.h"

using namespace dash::sim;

namespace {

// FNV-1a 64 written out again from docs/schedule-protocol.md, byte by byte, to pin the definition.
struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  void feed(std::int64_t v) {
    for (int byte = 0; byte < 8; ++byte) {
      h ^= (static_cast<std::uint64_t>(v) >> (8 * byte)) & 0xffU;
      h *= 0x100000001b3ULL;
    }
  }
};

}  // namespace

TEST_CASE("schedule_hash follows the protocol's definition", "[schedule]") {
  Schedule s;
  s.launch = LaunchModel::kDynamic;
  s.ctas = {Cta{{WorkItem{0, 1, 2, {3, -4}}}}};
  s.dq_order = {{1, 0}};
  Fnv f;
  for (std::int64_t v : {1, 1, 1, 0, 1, 2, 2, 3, -4, 1, 2, 1, 0, 0}) f.feed(v);
  CHECK(schedule_hash(s) == f.h);

  Fnv empty;
  for (int n = 0; n < 4; ++n) empty.feed(0);
  CHECK(schedule_hash(Schedule{}) == empty.h);
}

TEST_CASE("schedule_hash sees ranks and launch, not the label", "[schedule]") {
  Problem problem;
  problem.q_heads = 4;
  problem.kv_heads = 2;
  problem.seqlen_q = problem.seqlen_k = 1024;
  problem.mask.kind = MaskKind::kCausal;
  Schedule const s = make_strategy("fa3", problem, machine_with_sms(9));
  std::uint64_t const h = schedule_hash(s);

  Schedule relabelled = s;
  relabelled.strategy = "renamed";
  CHECK(schedule_hash(relabelled) == h);

  Schedule reranked = s;
  auto& order = reranked.dq_order.back();  // the last Q tile of a causal head sees every KV tile
  REQUIRE(order.size() >= 2);
  std::swap(order[0], order[1]);
  CHECK(schedule_hash(reranked) != h);

  Schedule relaunched = s;
  relaunched.launch = LaunchModel::kDynamic;
  CHECK(schedule_hash(relaunched) != h);
}

TEST_CASE("scatter_ranks inverts an order into ranks relative to a base", "[schedule]") {
  std::vector<int> ranks(5, -1);
  dash::sim::scatter_ranks({12, 10, 13}, 10, ranks);
  CHECK(ranks == std::vector<int>{1, -1, 0, 2, -1});
  dash::sim::scatter_ranks({}, 10, ranks);  // nothing to place: unchanged
  CHECK(ranks == std::vector<int>{1, -1, 0, 2, -1});
  std::vector<int> whole(3, -1);  // base 0, every slot filled
  dash::sim::scatter_ranks({2, 0, 1}, 0, whole);
  CHECK(whole == std::vector<int>{1, 2, 0});
}

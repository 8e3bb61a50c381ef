// Problem geometry: tile counts, tails and the mask's visible pairs against a brute-force count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dagsim/core/error.h"
#include "dagsim/core/problem.h"
#include "dagsim/core/rng.h"
#include "tests/dagsim/random_schedule.h"

using namespace dash::sim;

namespace {

// Row r sees column c iff r + offset - left <= c <= r + offset + right (mask.h), checked pair by pair.
std::int64_t brute_visible(Problem const& p, int b, int i, int j) {
  std::int64_t const offset = std::int64_t{p.len_k(b)} - p.len_q(b);
  std::int64_t count = 0;
  for (int r = i * p.tile_m; r < std::min((i + 1) * p.tile_m, p.len_q(b)); ++r) {
    for (int c = j * p.tile_n; c < std::min((j + 1) * p.tile_n, p.len_k(b)); ++c) {
      bool visible = true;
      if (p.mask.kind == MaskKind::kCausal) visible = c <= r + offset;
      if (p.mask.kind == MaskKind::kWindow) visible = c >= r + offset - p.mask.left && c <= r + offset + p.mask.right;
      if (visible) ++count;
    }
  }
  return count;
}

}  // namespace

TEST_CASE("tile counts round up and tails are clipped", "[problem]") {
  Problem p;
  p.seqlen_q = 100;
  p.seqlen_k = 130;
  p.tile_m = 64;
  p.tile_n = 64;
  CHECK(p.q_tiles(0) == 2);
  CHECK(p.kv_tiles(0) == 3);
  CHECK(p.tile_pairs(0, 1, 2) == 36 * 2);
  CHECK(p.tile_pairs(0, 0, 0) == 64 * 64);
  CHECK(p.visible_pairs(0, 1, 2) == 72);  // full mask: all of the clipped tile
  p.q_heads = 3;
  p.kv_heads = 3;
  CHECK(p.tile_count() == 2 * 3 * 3);
  p.batch = 2;
  p.seqlens_q = {100, 65};  // varlen: 2 x 3 and 2 x 1 tiles
  p.seqlens_k = {130, 10};
  CHECK(p.tile_count() == (2 * 3 + 2 * 1) * 3);
}

TEST_CASE("causal mask is bottom-right aligned", "[problem]") {
  Problem p;
  p.seqlen_q = 64;
  p.seqlen_k = 128;
  p.tile_m = 64;
  p.tile_n = 64;
  p.mask = Mask{MaskKind::kCausal, 0, 0};
  // offset 64: row r sees columns 0..r+64, so KV tile 0 is fully visible and tile 1 a triangle.
  CHECK(p.visible_pairs(0, 0, 0) == 64 * 64);
  CHECK(p.visible_pairs(0, 0, 1) == 64 * 65 / 2);
  p.seqlen_q = 128;
  p.seqlen_k = 64;
  // offset -64: the first 64 rows see nothing.
  CHECK(p.visible_pairs(0, 0, 0) == 0);
  CHECK_FALSE(p.is_visible(0, 0, 0));
  CHECK(p.visible_pairs(0, 1, 0) == 64 * 65 / 2);
}

TEST_CASE("visible_pairs equals a brute-force count on random shapes and masks", "[problem]") {
  Rng rng(20261129);
  int windows = 0;
  int varlen = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Problem const p = testing::random_problem(rng);
    REQUIRE_NOTHROW(validate_problem(p));
    windows += p.mask.kind == MaskKind::kWindow ? 1 : 0;
    varlen += p.seqlens_q.empty() ? 0 : 1;
    for (int b = 0; b < p.batch; ++b) {
      std::int64_t total = 0;
      for (int i = 0; i < p.q_tiles(b); ++i) {
        for (int j = 0; j < p.kv_tiles(b); ++j) {
          INFO("trial " << trial << " b=" << b << " i=" << i << " j=" << j << " mask " << to_string(p.mask));
          std::int64_t const expected = brute_visible(p, b, i, j);
          REQUIRE(p.visible_pairs(b, i, j) == expected);
          REQUIRE(p.visible_pairs(b, i, j) <= p.tile_pairs(b, i, j));
          total += expected;
        }
      }
      if (p.mask.kind == MaskKind::kFull) REQUIRE(total == std::int64_t{p.len_q(b)} * p.len_k(b));
    }
  }
  CHECK(windows > 50);  // the generator really covers windows and varlen
  CHECK(varlen > 50);
}

TEST_CASE("validate_problem names the bad field", "[problem]") {
  Problem p;
  p.kv_heads = 3;
  p.q_heads = 4;
  CHECK_THROWS_WITH(validate_problem(p), Catch::Contains("kv-heads (3) must divide heads (4)"));
  p = Problem{};
  p.tile_m = 24;
  CHECK_THROWS_AS(validate_problem(p), dash::UserError);
  p = Problem{};
  p.batch = 2;
  p.seqlens_q = {10};
  p.seqlens_k = {10, 20};
  CHECK_THROWS_WITH(validate_problem(p), Catch::Contains("varlen"));
}

TEST_CASE("our RNG: reproducible, in range, every value reached", "[rng]") {
  Rng a(123);
  Rng b(123);
  Rng c(124);
  bool differs = false;
  for (int k = 0; k < 100; ++k) {
    std::uint64_t const x = a.next();
    REQUIRE(x == b.next());
    differs = differs || x != c.next();
  }
  CHECK(differs);
  // uniform_int covers [lo, hi] exactly, roughly evenly (12000 draws over 6 values: ~2000 each).
  std::vector<int> counts(6, 0);
  for (int k = 0; k < 12000; ++k) {
    auto const v = a.uniform_int(-2, 3);
    REQUIRE(v >= -2);
    REQUIRE(v <= 3);
    ++counts[static_cast<std::size_t>(v + 2)];
  }
  for (int count : counts) {
    CHECK(count > 1700);
    CHECK(count < 2300);
  }
  CHECK(a.uniform_int(5, 5) == 5);
  double const u = a.uniform01();
  CHECK(u >= 0.0);
  CHECK(u < 1.0);
  std::vector<int> values{0, 1, 2, 3, 4, 5, 6, 7};
  a.shuffle(values);
  std::vector<int> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
}

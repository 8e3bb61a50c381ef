#include "dagsim/core/problem.h"

#include <algorithm>
#include <limits>

#include "dagsim/core/error.h"

namespace dash::sim {
namespace {

// Far beyond any sequence length, small enough that sums stay in int64.
constexpr std::int64_t kUnbounded = std::int64_t{1} << 40;

struct Band {
  std::int64_t left;   // row r sees columns >= r + offset - left
  std::int64_t right;  // ... and <= r + offset + right
};

Band band_of(Mask const& mask) {
  switch (mask.kind) {
    case MaskKind::kFull: return {kUnbounded, kUnbounded};
    case MaskKind::kCausal: return {kUnbounded, 0};
    case MaskKind::kWindow: return {mask.left, mask.right};
  }
  return {kUnbounded, kUnbounded};
}

}  // namespace

std::int64_t Problem::tile_pairs(int b, int i, int j) const {
  std::int64_t const r0 = std::int64_t{i} * tile_m;
  std::int64_t const r1 = std::min<std::int64_t>(r0 + tile_m, len_q(b));
  std::int64_t const c0 = std::int64_t{j} * tile_n;
  std::int64_t const c1 = std::min<std::int64_t>(c0 + tile_n, len_k(b));
  if (r1 <= r0 || c1 <= c0) return 0;
  return (r1 - r0) * (c1 - c0);
}

std::int64_t Problem::visible_pairs(int b, int i, int j) const {
  std::int64_t const r0 = std::int64_t{i} * tile_m;
  std::int64_t const r1 = std::min<std::int64_t>(r0 + tile_m, len_q(b));  // exclusive
  std::int64_t const c0 = std::int64_t{j} * tile_n;
  std::int64_t const c1 = std::min<std::int64_t>(c0 + tile_n, len_k(b));  // exclusive
  if (r1 <= r0 || c1 <= c0) return 0;
  Band const band = band_of(mask);
  std::int64_t const offset = std::int64_t{len_k(b)} - len_q(b);
  auto lo = [&](std::int64_t r) { return r + offset - band.left; };
  auto hi = [&](std::int64_t r) { return r + offset + band.right; };
  // Both bounds grow with r, so the corners decide the two easy cases.
  if (lo(r1 - 1) <= c0 && hi(r0) >= c1 - 1) return (r1 - r0) * (c1 - c0);
  if (hi(r1 - 1) < c0 || lo(r0) > c1 - 1) return 0;
  std::int64_t count = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t const first = std::max(lo(r), c0);
    std::int64_t const last = std::min(hi(r), c1 - 1);
    if (last >= first) count += last - first + 1;
  }
  return count;
}

std::vector<int> Problem::visible_q_tiles(int b, int j) const {
  std::vector<int> tiles;
  for (int i = 0; i < q_tiles(b); ++i) {
    if (is_visible(b, i, j)) tiles.push_back(i);
  }
  return tiles;
}

std::vector<int> Problem::visible_kv_tiles(int b, int i) const {
  std::vector<int> tiles;
  for (int j = 0; j < kv_tiles(b); ++j) {
    if (is_visible(b, i, j)) tiles.push_back(j);
  }
  return tiles;
}

std::int64_t Problem::total_q() const {
  std::int64_t t = 0;
  for (int b = 0; b < batch; ++b) t += len_q(b);
  return t;
}

std::int64_t Problem::total_k() const {
  std::int64_t t = 0;
  for (int b = 0; b < batch; ++b) t += len_k(b);
  return t;
}

std::int64_t Problem::tile_count() const {
  std::int64_t total = 0;
  for (int b = 0; b < batch; ++b) total += std::int64_t{q_tiles(b)} * kv_tiles(b) * q_heads;
  return total;
}

void validate_problem(Problem const& p) {
  auto positive = [](char const* name, int value) {
    if (value <= 0) user_error("{} must be positive, got {}", name, value);
  };
  positive("batch", p.batch);
  positive("heads", p.q_heads);
  positive("kv-heads", p.kv_heads);
  positive("head-dim", p.head_dim);
  positive("tile-m", p.tile_m);
  positive("tile-n", p.tile_n);
  if (p.q_heads % p.kv_heads != 0) {
    user_error("kv-heads ({}) must divide heads ({})", p.kv_heads, p.q_heads);
  }
  if (p.tile_m % 16 != 0 || p.tile_n % 16 != 0 || p.tile_m > 256 || p.tile_n > 256) {
    user_error("tiles must be multiples of 16 and at most 256, got {}x{}", p.tile_m, p.tile_n);
  }
  constexpr int kMaxLen = 1 << 24;
  constexpr int kMaxBatch = 1 << 16;
  constexpr int kMaxHeads = 1 << 12;
  if (p.batch > kMaxBatch) user_error("batch {} is larger than {}", p.batch, kMaxBatch);
  if (p.q_heads > kMaxHeads) user_error("heads {} is larger than {}", p.q_heads, kMaxHeads);
  if (p.head_dim > 1024) user_error("head-dim {} is larger than 1024", p.head_dim);
  if (p.mask.kind == MaskKind::kWindow && (p.mask.left < 0 || p.mask.right < 0)) {
    user_error("window sides must be non-negative, got {},{}", p.mask.left, p.mask.right);
  }
  bool const varlen = !p.seqlens_q.empty() || !p.seqlens_k.empty();
  if (varlen) {
    if (p.seqlens_q.size() != static_cast<std::size_t>(p.batch) ||
        p.seqlens_k.size() != static_cast<std::size_t>(p.batch)) {
      user_error("varlen needs {} q lengths and {} k lengths, got {} and {}", p.batch, p.batch,
                 p.seqlens_q.size(), p.seqlens_k.size());
    }
  }
  for (int b = 0; b < p.batch; ++b) {
    if (p.len_q(b) <= 0 || p.len_k(b) <= 0) {
      user_error("sequence lengths must be positive, batch {} has {} and {}", b, p.len_q(b), p.len_k(b));
    }
    if (p.len_q(b) > kMaxLen || p.len_k(b) > kMaxLen) {
      user_error("sequence length above {} in batch {}", kMaxLen, b);
    }
  }
  std::int64_t const total_steps = p.tile_count();
  // Keeps node ids in int and memory bounded (about 100 bytes per step in the simulator).
  constexpr std::int64_t kMaxSteps = std::int64_t{1} << 27;
  if (total_steps > kMaxSteps) {
    user_error("problem has {} tile pairs, more than the simulator's limit of {}", total_steps, kMaxSteps);
  }
}

}  // namespace dash::sim

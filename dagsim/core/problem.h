#pragma once
// One attention backward problem: shapes, tiles and mask. A plain value.
#include <cstdint>
#include <vector>

#include "dagsim/core/mask.h"

namespace dash::sim {

struct Problem {
  int batch = 1;
  int q_heads = 1;
  int kv_heads = 1;  ///< divides q_heads; q_heads / kv_heads q heads share one KV head (GQA/MQA)
  int seqlen_q = 1024;
  int seqlen_k = 1024;
  int head_dim = 128;
  int tile_m = 64;   ///< rows of a Q tile
  int tile_n = 128;  ///< rows of a KV tile
  Mask mask{};
  /// Varlen: per-batch lengths. Empty = every batch has seqlen_q / seqlen_k. When set, both have
  /// exactly `batch` entries and seqlen_q / seqlen_k are ignored.
  std::vector<int> seqlens_q;
  std::vector<int> seqlens_k;

  friend bool operator==(Problem const&, Problem const&) = default;

  [[nodiscard]] int len_q(int b) const { return seqlens_q.empty() ? seqlen_q : seqlens_q[b]; }
  [[nodiscard]] int len_k(int b) const { return seqlens_k.empty() ? seqlen_k : seqlens_k[b]; }
  [[nodiscard]] int q_tiles(int b) const { return (len_q(b) + tile_m - 1) / tile_m; }
  [[nodiscard]] int kv_tiles(int b) const { return (len_k(b) + tile_n - 1) / tile_n; }
  /// Query (key) rows over every batch: the packed length of a varlen problem.
  [[nodiscard]] std::int64_t total_q() const;
  [[nodiscard]] std::int64_t total_k() const;
  [[nodiscard]] int group_size() const { return q_heads / kv_heads; }
  [[nodiscard]] bool is_gqa() const { return kv_heads != q_heads; }
  /// (Q tile, KV tile) combinations over every batch and q head, masked ones included: the most
  /// steps a schedule of the problem can have (validate_problem bounds it for the simulator).
  [[nodiscard]] std::int64_t tile_count() const;

  /// Number of (query row, key column) pairs of tile (i, j) of batch b the mask leaves visible.
  [[nodiscard]] std::int64_t visible_pairs(int b, int i, int j) const;
  /// Rows x columns of tile (i, j) of batch b after clipping at the sequence ends (tail tiles).
  [[nodiscard]] std::int64_t tile_pairs(int b, int i, int j) const;
  [[nodiscard]] bool is_visible(int b, int i, int j) const { return visible_pairs(b, i, j) > 0; }
  /// The Q tiles that see KV tile j of batch b, ascending: what a work item must visit.
  [[nodiscard]] std::vector<int> visible_q_tiles(int b, int j) const;
  /// The KV tiles that Q tile i of batch b sees, ascending: the contributors to a dQ tile.
  [[nodiscard]] std::vector<int> visible_kv_tiles(int b, int i) const;
};

/// Throws UserError naming the first bad field: non-positive sizes, kv_heads not dividing q_heads,
/// varlen vectors of the wrong length, a window with negative sides, tiles not multiples of 16.
void validate_problem(Problem const& problem);

}  // namespace dash::sim

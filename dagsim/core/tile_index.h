#pragma once
// Dense ids for the problem's work items (b, q head, kv tile), dQ tiles (b, q head, q tile) and
// dK/dV tiles (b, kv head, kv tile), also under varlen where tile counts differ per batch.
#include <cstdint>
#include <vector>

#include "dagsim/core/problem.h"

namespace dash::sim {

struct ItemKey {
  int batch = 0;
  int head = 0;  ///< q head (work items, dQ tiles) or kv head (dK/dV tiles)
  int tile = 0;  ///< kv tile (work items, dK/dV tiles) or q tile (dQ tiles)
  friend bool operator==(ItemKey const&, ItemKey const&) = default;
};

class TileIndex {
 public:
  explicit TileIndex(Problem const& problem);

  [[nodiscard]] int num_items() const { return item_base_.back(); }
  [[nodiscard]] int num_dq_tiles() const { return dq_base_.back(); }
  [[nodiscard]] int num_dkv_tiles() const { return dkv_base_.back(); }

  [[nodiscard]] int item_id(int b, int h, int j) const { return item_base_[b] + h * kv_tiles_[b] + j; }
  [[nodiscard]] int dq_id(int b, int h, int i) const { return dq_base_[b] + h * q_tiles_[b] + i; }
  [[nodiscard]] int dkv_id(int b, int kvh, int j) const { return dkv_base_[b] + kvh * kv_tiles_[b] + j; }

  [[nodiscard]] ItemKey item_key(int id) const;
  [[nodiscard]] ItemKey dq_key(int id) const;
  [[nodiscard]] ItemKey dkv_key(int id) const;

  [[nodiscard]] int q_tiles(int b) const { return q_tiles_[b]; }
  [[nodiscard]] int kv_tiles(int b) const { return kv_tiles_[b]; }
  [[nodiscard]] int max_q_tiles() const { return max_q_tiles_; }

  /// Offsets into a flat array with one slot per (dQ tile, KV tile of its batch): the slot of KV
  /// tile j for dQ tile id is offsets[id] + j; offsets.back() is the array's size.
  [[nodiscard]] std::vector<std::int64_t> dq_kv_offsets() const;

 private:
  int q_heads_;
  int kv_heads_;
  std::vector<int> q_tiles_, kv_tiles_;
  std::vector<int> item_base_, dq_base_, dkv_base_;  // prefix sums, size batch + 1
  int max_q_tiles_ = 0;
};

}  // namespace dash::sim

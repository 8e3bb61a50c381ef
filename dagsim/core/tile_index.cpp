#include "dagsim/core/tile_index.h"

#include <algorithm>

#include "dagsim/core/error.h"

namespace dash::sim {

TileIndex::TileIndex(Problem const& problem)
    : q_heads_(problem.q_heads), kv_heads_(problem.kv_heads) {
  int const batch = problem.batch;
  q_tiles_.resize(batch);
  kv_tiles_.resize(batch);
  item_base_.assign(batch + 1, 0);
  dq_base_.assign(batch + 1, 0);
  dkv_base_.assign(batch + 1, 0);
  for (int b = 0; b < batch; ++b) {
    q_tiles_[b] = problem.q_tiles(b);
    kv_tiles_[b] = problem.kv_tiles(b);
    max_q_tiles_ = std::max(max_q_tiles_, q_tiles_[b]);
    item_base_[b + 1] = item_base_[b] + q_heads_ * kv_tiles_[b];
    dq_base_[b + 1] = dq_base_[b] + q_heads_ * q_tiles_[b];
    dkv_base_[b + 1] = dkv_base_[b] + kv_heads_ * kv_tiles_[b];
  }
}

namespace {

ItemKey key_in(std::vector<int> const& base, std::vector<int> const& tiles, int id) {
  DASH_ASSERT(id >= 0 && id < base.back());
  auto const it = std::upper_bound(base.begin(), base.end(), id);
  int const b = static_cast<int>(it - base.begin()) - 1;
  int const local = id - base[b];
  return ItemKey{b, local / tiles[b], local % tiles[b]};
}

}  // namespace

ItemKey TileIndex::item_key(int id) const { return key_in(item_base_, kv_tiles_, id); }
ItemKey TileIndex::dq_key(int id) const { return key_in(dq_base_, q_tiles_, id); }
ItemKey TileIndex::dkv_key(int id) const { return key_in(dkv_base_, kv_tiles_, id); }

std::vector<std::int64_t> TileIndex::dq_kv_offsets() const {
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(num_dq_tiles()) + 1, 0);
  for (int id = 0; id < num_dq_tiles(); ++id) {
    offsets[id + 1] = offsets[id] + kv_tiles(dq_key(id).batch);
  }
  return offsets;
}

}  // namespace dash::sim

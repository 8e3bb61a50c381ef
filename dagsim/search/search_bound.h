#pragma once
// The subset-sum refinement of the packing bound: an SM's load is a sum of WHOLE item loads, so the
// busiest SM carries at least the smallest achievable subset sum of the item loads that reaches
// the average load. docs/search.md ("Bounds and certificates") gives the argument.
#include <cstdint>
#include <optional>
#include <vector>

#include "dagsim/core/units.h"

namespace dash::sim {

/// Largest subset-sum table (in bits, one bit per multiple of the loads' gcd) the bound will
/// build: 2^26 bits = 8 MiB, tens of milliseconds on the largest grid case.
inline constexpr std::int64_t kSubsetSumMaxBits = std::int64_t{1} << 26;

/// The smallest sum of a sub-multiset of `loads` (each used at most as often as it occurs) that is
/// >= `target`; nullopt when no subset reaches `target` or when the table would need more than
/// `max_bits` bits (the caller then keeps its weaker bound). Loads must be positive.
std::optional<Cycles> smallest_subset_sum_at_least(std::vector<Cycles> loads, Cycles target,
                                                   std::int64_t max_bits = kSubsetSumMaxBits);

/// Most table words times items (and DP cells) the counted bound may spend: about a second.
inline constexpr std::int64_t kCountedMaxWork = std::int64_t{1} << 29;

/// The counted packing bound: the smallest T in [lo, hi] for which `bins` bins of at most T each
/// could hold the items when only each bin's item count K and load are tracked: a bin of K items
/// carries at most best_T(K), the largest sum of K of the items that is <= T, so T is impossible
/// when no split of the N items into counts K_1 + ... + K_bins = N has sum_b best_T(K_b) >= the
/// total load. `lo` must be a lower bound and `hi` the largest load of a real split (so hi
/// passes); nullopt when the tables would cost more than `max_work`.
std::optional<Cycles> counted_packing_bound(std::vector<Cycles> loads, int bins, Cycles lo, Cycles hi,
                                            std::int64_t max_work = kCountedMaxWork);

/// Lower bound on the largest load when `loads` (whole items) are split over `bins` bins:
/// max(largest item, the m+1 smallest of the m*bins+1 largest items for every m, the smallest
/// subset sum >= ceil(sum / bins) — or ceil(sum / bins) itself when that table is too large), then
/// raised by counted_packing_bound when it is affordable. 0 for no items.
Cycles load_lower_bound(std::vector<Cycles> loads, int bins, std::int64_t max_bits = kSubsetSumMaxBits,
                        std::int64_t max_work = kCountedMaxWork);

}  // namespace dash::sim

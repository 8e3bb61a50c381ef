#include "dagsim/search/search_bound.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <functional>
#include <map>
#include <numeric>

#include "dagsim/core/error.h"

namespace dash::sim {
namespace {

// dst |= src << shift over `words` words (sums past the table fall off). Walks from the top
// word down so that dst == src works too: every source word is read before it is overwritten.
void or_shifted(std::uint64_t* dst, std::uint64_t const* src, std::int64_t words, std::int64_t shift) {
  std::int64_t const word_shift = shift / 64;
  int const bit_shift = static_cast<int>(shift % 64);
  for (std::int64_t i = words - 1; i >= word_shift; --i) {
    std::int64_t const from = i - word_shift;
    std::uint64_t moved = src[from] << bit_shift;
    if (bit_shift != 0 && from > 0) moved |= src[from - 1] >> (64 - bit_shift);
    dst[i] |= moved;
  }
}

void or_shifted(std::vector<std::uint64_t>& bits, std::int64_t shift) {
  or_shifted(bits.data(), bits.data(), static_cast<std::int64_t>(bits.size()), shift);
}

// The highest set bit at index <= limit, or -1.
std::int64_t highest_set_at_most(std::uint64_t const* bits, std::int64_t limit) {
  for (std::int64_t w = limit / 64; w >= 0; --w) {
    std::uint64_t word = bits[w];
    if (w == limit / 64) {
      int const keep = static_cast<int>(limit % 64) + 1;
      if (keep < 64) word &= (std::uint64_t{1} << keep) - 1;
    }
    if (word != 0) return w * 64 + (63 - std::countl_zero(word));
  }
  return -1;
}

// The largest load of a real split: greedy, largest item onto the least loaded bin (LPT).
Cycles greedy_split_max(std::vector<Cycles> const& descending, int bins) {
  std::vector<Cycles> heap(static_cast<std::size_t>(bins), 0);  // min-heap of bin loads
  for (Cycles const w : descending) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    heap.back() += w;
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  }
  return *std::max_element(heap.begin(), heap.end());
}

}  // namespace

std::optional<Cycles> smallest_subset_sum_at_least(std::vector<Cycles> loads, Cycles target, std::int64_t max_bits) {
  if (target <= 0) return Cycles{0};  // the empty subset
  Cycles total = 0;
  Cycles largest = 0;
  Cycles g = 0;
  for (Cycles const w : loads) {
    DASH_ASSERT(w > 0);
    total += w;
    largest = std::max(largest, w);
    g = std::gcd(g, w);
  }
  if (total < target) return std::nullopt;
  // Every subset sum is a multiple of g, so work in units of g: sum >= target <=> sum/g >= goal.
  std::int64_t const goal = (target + g - 1) / g;
  // Add the items one by one: the first prefix sum to reach goal exceeds the previous (< goal) by
  // at most the largest item, so the answer is below goal + largest/g and the table stops there.
  std::int64_t const size = goal + largest / g;
  if (size > max_bits) return std::nullopt;
  std::vector<std::uint64_t> bits(static_cast<std::size_t>((size + 63) / 64), 0);
  bits[0] = 1;  // the empty sum
  std::map<Cycles, std::int64_t> counts;
  for (Cycles const w : loads) ++counts[w / g];
  // Bounded multiplicity by binary splitting: chunks 1, 2, 4, ..., rest of each load make every
  // count 0..n of it reachable, with O(log n) shifts instead of n.
  for (auto const& [unit, count] : counts) {
    std::int64_t left = count;
    for (std::int64_t chunk = 1; left > 0; chunk *= 2) {
      std::int64_t const take = std::min(chunk, left);
      left -= take;
      if (take * unit >= size) break;  // lands beyond the table: changes nothing below it
      or_shifted(bits, take * unit);
    }
  }
  for (std::int64_t s = goal; s < size; ++s) {
    if ((bits[static_cast<std::size_t>(s / 64)] >> (s % 64)) & 1U) return s * g;
  }
  DASH_ASSERT(false && "a prefix of the items reaches the goal below goal + largest");
  return std::nullopt;
}

// Why this is a lower bound (docs/search.md): take any split whose largest bin load is M <= T.
// Bin b holds K_b items with load V_b <= T, and V_b is a sum of K_b of the items, so
// V_b <= best_T(K_b). Summing, sum_b best_T(K_b) >= sum_b V_b = total with sum_b K_b = N: the
// DP below, which maximises sum_b best_T(K_b) over all counts summing to N, reaches the total.
// So when the DP falls short, every split has M > T. best_T grows with T, so the test is
// monotone and a binary search finds the smallest T that passes.
std::optional<Cycles> counted_packing_bound(std::vector<Cycles> loads, int bins, Cycles lo, Cycles hi,
                                            std::int64_t max_work) {
  DASH_ASSERT(bins >= 1 && lo <= hi);
  std::erase_if(loads, [](Cycles w) { return w == 0; });  // zero loads change no sum
  if (loads.empty()) return lo;
  std::sort(loads.begin(), loads.end());
  Cycles g = 0;
  Cycles total = 0;
  for (Cycles const w : loads) {
    DASH_ASSERT(w > 0);
    g = std::gcd(g, w);
    total += w;
  }
  DASH_ASSERT(hi % g == 0);
  auto const n = static_cast<std::int64_t>(loads.size());
  std::int64_t const t_lo = (lo + g - 1) / g;
  std::int64_t const t_hi = hi / g;
  std::int64_t const total_units = total / g;
  // No bin of load <= hi holds more items than the smallest ones that fit.
  std::int64_t kmax = 0;
  for (Cycles sum = 0; kmax < n && sum + loads[static_cast<std::size_t>(kmax)] <= hi; ++kmax) {
    sum += loads[static_cast<std::size_t>(kmax)];
  }
  std::int64_t const words = (t_hi + 1 + 63) / 64;
  std::map<std::int64_t, std::int64_t> counts;
  for (Cycles const w : loads) ++counts[w / g];
  std::int64_t table_work = 0;
  for (auto const& [unit, count] : counts) table_work += std::min(count, kmax) * kmax * words;
  std::int64_t const steps = std::bit_width(static_cast<std::uint64_t>(t_hi - t_lo + 1));
  std::int64_t const dp_work = bins * n * (kmax + 1) * steps;
  if (table_work > max_work || dp_work > max_work) return std::nullopt;

  // reach[K]: bit s set iff some K of the items sum to s units (s <= t_hi).
  std::vector<std::uint64_t> reach(static_cast<std::size_t>((kmax + 1) * words), 0);
  auto row = [&](std::int64_t k) { return reach.data() + k * words; };
  row(0)[0] = 1;
  for (auto const& [unit, count] : counts) {
    for (std::int64_t copy = 0; copy < std::min(count, kmax); ++copy) {
      for (std::int64_t k = kmax; k >= 1; --k) or_shifted(row(k), row(k - 1), words, unit);
    }
  }

  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min() / 4;
  std::vector<std::int64_t> best(static_cast<std::size_t>(kmax + 1));
  std::vector<std::int64_t> cur(static_cast<std::size_t>(n + 1));
  std::vector<std::int64_t> next(static_cast<std::size_t>(n + 1));
  auto passes = [&](std::int64_t t) {
    for (std::int64_t k = 0; k <= kmax; ++k) {
      std::int64_t const s = highest_set_at_most(row(k), t);
      best[static_cast<std::size_t>(k)] = s < 0 ? kNone : s;
    }
    std::fill(cur.begin(), cur.end(), kNone);
    cur[0] = 0;
    for (std::int64_t b = 1; b <= bins; ++b) {
      std::fill(next.begin(), next.end(), kNone);
      // Only counts the remaining bins can still complete to n matter.
      std::int64_t const from = std::max<std::int64_t>(0, n - (bins - b) * kmax);
      std::int64_t const to = std::min(n, b * kmax);
      for (std::int64_t m = from; m <= to; ++m) {
        std::int64_t v = kNone;
        for (std::int64_t k = 0; k <= std::min(m, kmax); ++k) {
          std::int64_t const prev = cur[static_cast<std::size_t>(m - k)];
          std::int64_t const add = best[static_cast<std::size_t>(k)];
          if (prev != kNone && add != kNone) v = std::max(v, prev + add);
        }
        next[static_cast<std::size_t>(m)] = v;
      }
      std::swap(cur, next);
    }
    return cur[static_cast<std::size_t>(n)] >= total_units;
  };
  std::int64_t low = t_lo;
  std::int64_t high = t_hi;  // a real split: passes
  while (low < high) {
    std::int64_t const mid = low + (high - low) / 2;
    if (passes(mid)) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  return std::max(lo, high * g);
}

Cycles load_lower_bound(std::vector<Cycles> loads, int bins, std::int64_t max_bits, std::int64_t max_work) {
  DASH_ASSERT(bins >= 1);
  if (loads.empty()) return 0;
  std::sort(loads.begin(), loads.end(), std::greater<>());
  auto const n = static_cast<std::int64_t>(loads.size());
  std::int64_t const p = bins;
  Cycles const total = std::accumulate(loads.begin(), loads.end(), Cycles{0});
  Cycles const average = (total + p - 1) / p;
  // Some bin carries at least the average, and the largest item.
  Cycles bound = std::max(average, loads.front());
  // Among the m*P+1 largest items some bin holds m+1 (pigeonhole): at least the m+1 smallest.
  std::vector<Cycles> prefix(static_cast<std::size_t>(n + 1), 0);
  for (std::int64_t i = 0; i < n; ++i) prefix[static_cast<std::size_t>(i + 1)] = prefix[static_cast<std::size_t>(i)] + loads[static_cast<std::size_t>(i)];
  for (std::int64_t m = 1; m * p + 1 <= n; ++m) {
    std::int64_t const last = m * p + 1;
    bound = std::max(bound, prefix[static_cast<std::size_t>(last)] - prefix[static_cast<std::size_t>(last - (m + 1))]);
  }
  // The bin with at least the average holds whole items, so its load is an achievable subset sum.
  // Zero loads add nothing to any sum; leave them out of the table.
  std::vector<Cycles> positive;
  positive.reserve(loads.size());
  for (Cycles const w : loads) {
    DASH_ASSERT(w >= 0);
    if (w > 0) positive.push_back(w);
  }
  if (auto const subset = smallest_subset_sum_at_least(positive, average, max_bits)) {
    bound = std::max(bound, *subset);
  }
  Cycles const greedy = greedy_split_max(loads, bins);
  if (bound < greedy) {
    if (auto const counted = counted_packing_bound(std::move(positive), bins, bound, greedy, max_work)) {
      bound = *counted;
    }
  }
  return bound;
}

}  // namespace dash::sim

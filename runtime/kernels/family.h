#pragma once
// Kernel families: the MMA technologies the backward main kernel is built for, each with its own
// traits (tiles per head dim, minimum compute capability, dQ buffers). No CUDA headers: the
// CLI, codegen and the model read these too (docs/design.md, "Kernel families").
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>

namespace dash::rt {

enum class KernelFamily : std::uint8_t {
  kSm80 = 0,  ///< portable: mma.sync m16n8k16, ldmatrix, cp.async; sm_80 and later
  kSm90 = 1,  ///< Hopper-native: wgmma, TMA, mbarriers, setmaxnreg, TMA bulk reduce-add; sm_90a only
};

inline constexpr KernelFamily kAllFamilies[] = {KernelFamily::kSm80, KernelFamily::kSm90};

/// What a family fixes at compile time, per head dim where it differs.
struct FamilyTraits {
  std::string_view name;  ///< "sm80", "sm90": the --kernel spelling
  int min_cc = 0;         ///< 10 * major + minor the family's code runs on
  bool exact_cc = false;  ///< sm_90a code runs on compute capability 9.0 only
  int tile_n = 0;         ///< KV rows per CTA work item
  int tile_m_d64 = 0;     ///< Q rows per step at head_dim 64
  int tile_m_d128 = 0;    ///< Q rows per step at head_dim 128
  int dq_buffers = 0;     ///< dQ partials in flight per CTA at the other tiles
  /// The Q tile the family runs at head_dim 128 on problems without a mask (0: tile_m_d128 there
  /// too): the sm90 kernel's 80-row tile (docs/design.md), with one dQ buffer. A problem may also
  /// name either tile at either mask.
  int tile_m_d128_full = 0;
  int dq_buffers_d128_full = 0;  ///< dQ partials in flight per CTA at that tile
  bool dq_tile_major = false;    ///< the fp32 dQ accumulator is tile-major (TileMajorDq)
  /// Without tickets, the first contribution to claim a dQ tile stores (BwdParams::dq_first_stores)
  bool dq_first_claims = false;
};

constexpr FamilyTraits family_traits(KernelFamily f) {
  switch (f) {
    case KernelFamily::kSm80:
      // 128-row Q tiles at head_dim 64 (as much MMA work per barrier as at 128); 64 at 128, where
      // 128-row steps' accumulators would not fit in registers. The dQ partial is added by the
      // warps that computed it: no buffer.
      return {"sm80", 80, false, 128, 128, 64, 0, 0, 0, false};
    case KernelFamily::kSm90:
      // The same tiles: two MMA warpgroups of 64 KV rows each; at head_dim 64 a 128-row Q tile
      // (S^T, dP^T 64 registers each), at 128 a 64-row one (dV, dK 64 registers each). A dQ-writer
      // warp adds from two shared-memory buffers while the warpgroups compute the next steps, a
      // whole tile per bulk reduce-add into a tile-major accumulator. Without a mask, 80-row Q
      // tiles at head_dim 128 (one dQ buffer: 227 KB hold no second one): 20% fewer steps, 9.6%
      // faster deterministic at d128 full 8k; with a causal mask 13% slower, its diagonal tiles
      // being larger (docs/results/2026-12-07-h100-stage-copies.md).
      // Without tickets the first dQ partial to claim its tile stores it (one CAS on the tile's
      // ticket), so that no run zeroes the accumulator unless some Q tile sees no key
      // (docs/design.md, "Hopper family").
      return {"sm90", 90, true, 128, 128, 64, 2, 80, 1, true, true};
  }
  return {};
}

constexpr std::string_view family_name(KernelFamily f) { return family_traits(f).name; }

constexpr bool family_has_head_dim(KernelFamily /*f*/, int head_dim) {
  return head_dim == 64 || head_dim == 128;
}
/// The family's Q tile at a head dim for any mask: the one every family has (tests, the portable
/// default set, schedules meant to run on either family).
constexpr int family_tile_m(KernelFamily f, int head_dim) {
  return head_dim == 64 ? family_traits(f).tile_m_d64 : family_traits(f).tile_m_d128;
}
/// The family's own Q tile for problems without a mask at a head dim (80 at 128 on sm90); 0: none.
constexpr int family_full_tile_m(KernelFamily f, int head_dim) {
  int const full = head_dim == 128 ? family_traits(f).tile_m_d128_full : 0;
  return full != family_tile_m(f, head_dim) ? full : 0;
}
/// The Q tile a problem gets when it names none: family_tile_m, except at head_dim 128 without a
/// mask (`masked` false: no causal mask, no window) where the family has a tile for that.
constexpr int family_default_tile_m(KernelFamily f, int head_dim, bool masked) {
  int const full = family_full_tile_m(f, head_dim);
  return !masked && full > 0 ? full : family_tile_m(f, head_dim);
}
constexpr int family_tile_n(KernelFamily f) { return family_traits(f).tile_n; }
constexpr bool family_has_tiles(KernelFamily f, int head_dim, int tile_m, int tile_n) {
  int const full = family_full_tile_m(f, head_dim);
  return (tile_m == family_tile_m(f, head_dim) || (full > 0 && tile_m == full)) &&
         tile_n == family_tile_n(f);
}
/// The dQ partials in flight per CTA the family's kernel has at these tiles where that is fewer
/// than at its other tiles (one at the sm90 80-row tile); none elsewhere, where the family's rates
/// (the machine profile's `dq_buffer`, docs/model.md) give the model's dQ buffer depth.
constexpr std::optional<int> family_dq_buffer_cap(KernelFamily f, int head_dim, int tile_m) {
  int const full = family_full_tile_m(f, head_dim);
  if (full > 0 && tile_m == full) return family_traits(f).dq_buffers_d128_full;
  return std::nullopt;
}
/// Whether the family's code runs on a device of compute capability major.minor.
constexpr bool family_runs_on(KernelFamily f, int major, int minor) {
  int const cc = 10 * major + minor;
  FamilyTraits const t = family_traits(f);
  return t.exact_cc ? cc == t.min_cc : cc >= t.min_cc;
}

/// "sm80", "sm90" -> the family; anything else (also "auto") -> none.
constexpr std::optional<KernelFamily> parse_family(std::string_view s) {
  for (KernelFamily f : kAllFamilies) {
    if (s == family_name(f)) return f;
  }
  return std::nullopt;
}

/// What `--kernel auto` picks on a device: the first family of this list that runs there and is
/// built into the binary (rt::runnable_families, runtime/attention.h). The
/// order is measured: on the H200 the sm90 family's best deterministic schedule is faster than the
/// sm80 family's on all 24 grid shapes, 1.01-1.57x (docs/results/2026-12-02-h200-sm90-family.md).
inline constexpr KernelFamily kAutoPreference[] = {KernelFamily::kSm90, KernelFamily::kSm80};

/// The family whose default tiles a GPU's shapes are planned with under `--kernel auto` (`dash
/// bench`, rt_bench's grid): the first that runs there; none where nothing runs.
constexpr std::optional<KernelFamily> planning_family(std::span<KernelFamily const> runnable) {
  if (runnable.empty()) return std::nullopt;
  return runnable.front();
}

/// What `--kernel auto` runs a problem on among the families that run on the device (`runnable`,
/// in kAutoPreference's order): the first that has the problem's tiles, else the first (whose
/// tiles a refusal then names); none where nothing runs.
constexpr std::optional<KernelFamily> auto_family(std::span<KernelFamily const> runnable,
                                                  int head_dim, int tile_m, int tile_n) {
  for (KernelFamily f : runnable) {
    if (family_has_tiles(f, head_dim, tile_m, tile_n)) return f;
  }
  return planning_family(runnable);
}

/// `dash bench --kernel auto` plans a GPU's shapes with planning_family
/// (tools/bench.cpp) while the runtime takes auto_family per problem: the two agree because each
/// family of the preference has every tile of the families after it.
static_assert([] {
  for (std::size_t i = 0; i < std::size(kAutoPreference); ++i) {
    for (std::size_t j = i + 1; j < std::size(kAutoPreference); ++j) {
      for (int d : {64, 128}) {
        KernelFamily const later = kAutoPreference[j];
        for (int tm : {family_tile_m(later, d), family_default_tile_m(later, d, false)}) {
          if (!family_has_tiles(kAutoPreference[i], d, tm, family_tile_n(later))) return false;
        }
      }
    }
  }
  return true;
}());

/// The family whose tiles a problem gets when no family is named (`dash simulate`, `search`, ...).
/// Its default tiles at head_dim 128 without a mask (80 x 128) are its own: a schedule made for
/// them runs on the sm90 kernels only; one made for family_tile_m's tiles runs on either.
inline constexpr KernelFamily kDefaultFamily = kAutoPreference[0];


}  // namespace dash::rt

#pragma once
// Kernel families: the MMA technologies the backward main kernel is built for, each with its own
// traits (tiles per head dim, minimum compute capability, dQ buffers). No CUDA headers: the
// CLI, codegen and the model read these too (docs/design.md, "Kernel families").
#include <cstdint>
#include <optional>
#include <string_view>

namespace dash::rt {

enum class KernelFamily : std::uint8_t {
  kSm80 = 0,  ///< portable: mma.sync m16n8k16, ldmatrix, cp.async; sm_80 and later
  kSm90 = 1,  ///< Hopper-native: wgmma, TMA, mbarriers, setmaxnreg, TMA bulk reduce-add; sm_90a only
};

inline constexpr KernelFamily kAllFamilies[] = {KernelFamily::kSm80, KernelFamily::kSm90};

/// What a family fixes at compile time, per head dim where it differs.
struct FamilyTraits {
  std::string_view name;      ///< "sm80", "sm90": the --kernel spelling
  int min_cc = 0;             ///< 10 * major + minor the family's code runs on
  bool exact_cc = false;      ///< sm_90a code runs on compute capability 9.0 only
  int tile_n = 0;             ///< KV rows per CTA work item
  int tile_m_d64 = 0;         ///< Q rows per step at head_dim 64
  int tile_m_d128 = 0;        ///< Q rows per step at head_dim 128
  int dq_buffers = 0;         ///< dQ partials in flight per CTA (the model's dQ buffer depth)
  /// Another Q tile the family runs at head_dim 128 when a problem asks for it (0: none): the
  /// sm90 kernel's 80-row tile (docs/design.md), with one dQ buffer.
  int tile_m_d128_alt = 0;
  bool dq_tile_major = false;  ///< the fp32 dQ accumulator is tile-major (TileMajorDq)
};

constexpr FamilyTraits family_traits(KernelFamily f) {
  switch (f) {
    case KernelFamily::kSm80:
      // 128-row Q tiles at head_dim 64 (as much MMA work per barrier as at 128); 64 at 128, where
      // 128-row steps' accumulators would not fit in registers. The dQ partial is added by the
      // warps that computed it: no buffer.
      return {"sm80", 80, false, 128, 128, 64, 0, 0, false};
    case KernelFamily::kSm90:
      // The same tiles: two MMA warpgroups of 64 KV rows each; at head_dim 64 a 128-row Q tile
      // (S^T, dP^T 64 registers each), at 128 a 64-row one (dV, dK 64 registers each). A dQ-writer
      // warp adds from two shared-memory buffers while the warpgroups compute the next steps, a
      // whole tile per bulk reduce-add into a tile-major accumulator.
      return {"sm90", 90, true, 128, 128, 64, 2, 80, true};
  }
  return {};
}

constexpr std::string_view family_name(KernelFamily f) { return family_traits(f).name; }

constexpr bool family_has_head_dim(KernelFamily /*f*/, int head_dim) {
  return head_dim == 64 || head_dim == 128;
}
constexpr int family_tile_m(KernelFamily f, int head_dim) {
  return head_dim == 64 ? family_traits(f).tile_m_d64 : family_traits(f).tile_m_d128;
}
constexpr int family_tile_n(KernelFamily f) { return family_traits(f).tile_n; }
constexpr bool family_has_tiles(KernelFamily f, int head_dim, int tile_m, int tile_n) {
  int const alt = head_dim == 128 ? family_traits(f).tile_m_d128_alt : 0;
  return (tile_m == family_tile_m(f, head_dim) || (alt > 0 && tile_m == alt)) && tile_n == family_tile_n(f);
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

/// The family whose tiles a problem gets when no family is named (`dash simulate`, `search`, ...).
/// Every family has the same tiles today, so a schedule made for them runs on either.
inline constexpr KernelFamily kDefaultFamily = kAutoPreference[0];


}  // namespace dash::rt

#pragma once
// KernelSpec: every compile-time choice of one specialized backward kernel, as named fields.
// A plain value with a JSON round-trip and a stable hash over its canonical serialization.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/form_kind.h"
#include "dagsim/core/mask.h"
#include "dagsim/core/schedule.h"
#include "runtime/dtype.h"
#include "runtime/kernels/family.h"

namespace dash::codegen {

/// Which CTA runs which work item (b, q head, kv tile), in which order.
struct WorkForm {
  WorkKind kind = WorkKind::kTable;  ///< strided, paired (closed forms) or a table
  int head_fastest = 0;        ///< strided: items numbered head-fastest (1) or KV-tile-fastest (0)
  int reverse = 0;             ///< strided: KV tiles numbered from the last one (SPT)
  std::vector<int> begin;      ///< table: per CTA, offset of its first item (size grid + 1)
  std::vector<int> items;      ///< table: item ids (batch * heads + head) * kv_tiles + kv_tile
  friend bool operator==(WorkForm const&, WorkForm const&) = default;
};

/// The Q tile a work item visits at step t.
struct QOrderForm {
  QOrderKind kind = QOrderKind::kTable;
  int mult = 0;                ///< rotate: start = lo + (kv_tile * mult + offset) mod n
  int offset = 0;
  std::vector<int> item_row;   ///< table: per item id, its row
  std::vector<int> row_begin;  ///< table: per row, offset into rows (size rows + 1)
  std::vector<int> rows;       ///< table: the Q tiles of every row, concatenated
  friend bool operator==(QOrderForm const&, QOrderForm const&) = default;
};

/// The rank of a contribution in its dQ tile (or, for dkv, of a q head in its dK/dV tile).
struct RankForm {
  RankKind kind = RankKind::kTable;
  int mult = 0;  ///< rotate: rank = ((i - offset - j * mult) mod modulus) / div;
                 ///< waves: the Q walk's mult and offset, modulus = its length n
  int offset = 0;
  int modulus = 1;
  int div = 1;
  /// lockstep: steps of every unit the closed work form deals out (all equal); the rank counts the
  /// contributors that reach the dQ tile earlier (forms.inc, dash_cf_rank_lockstep).
  int unit_steps = 0;
  std::vector<int> tile_row;  ///< table: per dQ (dK/dV) tile id, its row
  std::vector<int> rows;      ///< table: rows of ranks, row length kv_tiles (dkv: group size)
  friend bool operator==(RankForm const&, RankForm const&) = default;
};

/// Whether a per-tile array (ScheduleForm's q_lo, q_hi, kv_lo, kv_hi) is non-empty with one value
/// for every tile (a full mask): lowering and emission then use that value as a constant.
bool uniform(std::vector<int> const& per_tile);

/// The schedule as the kernel sees it: a closed form per protocol question, or compact tables.
struct ScheduleForm {
  /// The strategy name when every part is closed-form, "table" when none is, "<strategy>+table"
  /// when some part needed a table.
  std::string name = "table";
  WorkForm work;
  QOrderForm q_order;
  RankForm dq_rank;
  RankForm dkv_rank;  ///< kind "none" unless GQA/MQA
  /// Visible Q tiles lo..hi per KV tile and contributing KV tiles lo..hi per Q tile: small
  /// per-mask tables that keep the closed forms mask-agnostic.
  std::vector<int> q_lo, q_hi, kv_lo, kv_hi;
  friend bool operator==(ScheduleForm const&, ScheduleForm const&) = default;
};

struct KernelSpec {
  /// 2: the kernel family; the generated file holds the specialized policy only.
  int format_version = 2;
  /// The kernel family (rt::parse_family's spelling) whose kernel header the policy plugs into.
  rt::KernelFamily family = rt::KernelFamily::kSm80;
  std::string gpu;   ///< machine name ("h200", "sm100", ...)
  int sms = 0;
  int batch = 0, q_heads = 0, kv_heads = 0, seqlen_q = 0, seqlen_k = 0;
  int head_dim = 0, tile_m = 0, tile_n = 0;
  int q_tiles = 0, kv_tiles = 0;
  sim::MaskKind mask = sim::MaskKind::kFull;  ///< serialized as sim::to_string(MaskKind) spells it
  int window_left = 0, window_right = 0;
  rt::DType dtype = rt::DType::kBf16;  ///< serialized as rt::to_string spells it
  sim::LaunchModel launch =
      sim::LaunchModel::kPersistent;  ///< serialized as sim::to_string spells it
  int grid = 0;  ///< CTAs launched (persistent: <= sms; dynamic: one per work item)
  std::string strategy;
  ScheduleForm form;
  /// The runtime registry's key (docs/schedule-protocol.md), 16 hex digits.
  std::string schedule_hash;
  friend bool operator==(KernelSpec const&, KernelSpec const&) = default;
};

/// FNV-1a 64 of bytes.
std::uint64_t fnv1a64(std::string const& bytes);
std::string hex64(std::uint64_t value);  ///< 16 lower-case hex digits

/// Canonical JSON (sorted keys, no whitespace): equal specs give equal bytes.
std::string to_json(KernelSpec const& spec);
/// Parses to_json's output; malformed input is a UserError.
KernelSpec spec_from_json(std::string const& text);
/// FNV-1a 64 (hex) of to_json(spec).
std::string spec_hash(KernelSpec const& spec);
/// A short file-name-safe identifier: "d128_causal_s8192_h16_b1_<strategy>_<hash8>".
std::string spec_name(KernelSpec const& spec);

}  // namespace dash::codegen

#include "codegen/kernel_spec.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"

namespace dash::rt {
// The spec's JSON spells the dtype as rt::to_string does; any other text is an error (not a
// silent default, as NLOHMANN_JSON_SERIALIZE_ENUM would give).
void to_json(nlohmann::json& j, DType dtype) { j = to_string(dtype); }
void from_json(nlohmann::json const& j, DType& dtype) {
  auto const parsed = parse_dtype(j.get<std::string>());
  if (!parsed) throw nlohmann::json::type_error::create(302, "dtype must be \"bf16\" or \"fp16\"", &j);
  dtype = *parsed;
}
// The kernel family as family_name spells it; an unknown name is an error.
void to_json(nlohmann::json& j, KernelFamily family) { j = std::string(family_name(family)); }
void from_json(nlohmann::json const& j, KernelFamily& family) {
  auto const name = j.get<std::string>();
  auto const parsed = parse_family(name);
  if (!parsed) user_error("unknown kernel family '{}': expected sm80 or sm90", name);
  family = *parsed;
}
}  // namespace dash::rt

namespace dash::sim {
// The mask kind and the launch model as sim::to_string spells them; anything else is an error.
void to_json(nlohmann::json& j, MaskKind kind) { j = std::string(to_string(kind)); }
void from_json(nlohmann::json const& j, MaskKind& kind) {
  kind = parse_mask_kind(j.get<std::string>());
}
void to_json(nlohmann::json& j, LaunchModel launch) { j = to_string(launch); }
void from_json(nlohmann::json const& j, LaunchModel& launch) {
  launch = parse_launch(j.get<std::string>());
}
}  // namespace dash::sim

namespace dash::codegen {

// Strict: a missing key is an error, so a spec never silently takes a default it was not made with.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkForm, kind, head_fastest, reverse, begin, items)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(QOrderForm, kind, mult, offset, item_row, row_begin, rows)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankForm, kind, mult, offset, modulus, div, unit_steps, tile_row,
                                   rows)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ScheduleForm, name, work, q_order, dq_rank, dkv_rank, q_lo, q_hi,
                                   kv_lo, kv_hi)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(KernelSpec, format_version, family, gpu, sms, batch, q_heads,
                                   kv_heads, seqlen_q, seqlen_k, head_dim, tile_m, tile_n, q_tiles,
                                   kv_tiles, mask, window_left, window_right, dtype, launch, grid,
                                   strategy, form, schedule_hash)

std::uint64_t fnv1a64(std::string const& bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char const ch : bytes) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string hex64(std::uint64_t value) { return fmt::format("{:016x}", value); }

std::string to_json(KernelSpec const& spec) {
  // nlohmann's object is a std::map: keys come out sorted, dump() without indent is compact.
  return nlohmann::json(spec).dump();
}

KernelSpec spec_from_json(std::string const& text) {
  try {
    return nlohmann::json::parse(text).get<KernelSpec>();
  } catch (nlohmann::json::exception const& e) {
    user_error("malformed kernel spec: {}", e.what());
  }
}

std::string spec_hash(KernelSpec const& spec) { return hex64(fnv1a64(to_json(spec))); }

std::string spec_name(KernelSpec const& spec) {
  std::string strategy;
  for (char const ch : spec.strategy) {
    bool const safe = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    strategy += safe ? ch : '_';
  }
  return fmt::format("d{}_{}_s{}x{}_h{}_b{}_{}_{}", spec.head_dim, sim::to_string(spec.mask),
                     spec.seqlen_q, spec.seqlen_k, spec.q_heads, spec.batch, strategy,
                     spec_hash(spec).substr(0, 8));
}

bool uniform(std::vector<int> const& per_tile) {
  return !per_tile.empty() &&
         std::all_of(per_tile.begin(), per_tile.end(), [&](int v) { return v == per_tile.front(); });
}

}  // namespace dash::codegen

#pragma once
// The kinds of a schedule form's parts (codegen/kernel_spec.h): one enum each, one spelling each
// (the spec's JSON and the generated file's comments use it), checked when read.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace dash::codegen {

/// Which CTA runs which work item: closed forms (forms.inc) or a table.
enum class WorkKind : std::uint8_t { kStrided, kPaired, kTable };
/// The Q tile a work item visits at step t.
enum class QOrderKind : std::uint8_t { kAscending, kDescending, kRotate, kTable };
/// The rank of a contribution (rotate, lockstep and waves: dQ only; none: dK/dV without GQA).
enum class RankKind : std::uint8_t {
  kAscending,
  kDescending,
  kRotate,
  kLockstep,
  kWaves,
  kTable,
  kNone
};

std::string_view to_string(WorkKind kind);
std::string_view to_string(QOrderKind kind);
std::string_view to_string(RankKind kind);
/// The kind spelled `text`; UserError naming the known spellings otherwise.
WorkKind parse_work_kind(std::string_view text);
QOrderKind parse_q_order_kind(std::string_view text);
RankKind parse_rank_kind(std::string_view text);

// JSON as the spelling (nlohmann's ADL hooks, used by kernel_spec.cpp).
void to_json(nlohmann::json& j, WorkKind kind);
void from_json(nlohmann::json const& j, WorkKind& kind);
void to_json(nlohmann::json& j, QOrderKind kind);
void from_json(nlohmann::json const& j, QOrderKind& kind);
void to_json(nlohmann::json& j, RankKind kind);
void from_json(nlohmann::json const& j, RankKind& kind);

}  // namespace dash::codegen

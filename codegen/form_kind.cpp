#include "codegen/form_kind.h"

#include <array>
#include <cstddef>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dagsim/core/error.h"

namespace dash::codegen {

namespace {

template <typename Kind, std::size_t N>
using Spellings = std::array<std::pair<Kind, std::string_view>, N>;

constexpr Spellings<WorkKind, 3> kWork{
    {{WorkKind::kStrided, "strided"}, {WorkKind::kPaired, "paired"}, {WorkKind::kTable, "table"}}};
constexpr Spellings<QOrderKind, 4> kQOrder{{{QOrderKind::kAscending, "ascending"},
                                            {QOrderKind::kDescending, "descending"},
                                            {QOrderKind::kRotate, "rotate"},
                                            {QOrderKind::kTable, "table"}}};
constexpr Spellings<RankKind, 7> kRank{{{RankKind::kAscending, "ascending"},
                                        {RankKind::kDescending, "descending"},
                                        {RankKind::kRotate, "rotate"},
                                        {RankKind::kLockstep, "lockstep"},
                                        {RankKind::kWaves, "waves"},
                                        {RankKind::kTable, "table"},
                                        {RankKind::kNone, "none"}}};

template <typename Kind, std::size_t N>
std::string_view spell(Spellings<Kind, N> const& table, Kind kind) {
  for (auto const& [k, s] : table) {
    if (k == kind) return s;
  }
  DASH_ASSERT(false && "a form kind without a spelling");
  return {};
}

template <typename Kind, std::size_t N>
Kind parse(Spellings<Kind, N> const& table, std::string_view text, char const* what) {
  std::string known;
  for (auto const& [k, s] : table) {
    if (s == text) return k;
    known += fmt::format("{}{}", known.empty() ? "" : ", ", s);
  }
  user_error("unknown {} kind '{}' (known: {})", what, text, known);
}

template <typename Kind>
Kind read(nlohmann::json const& j, Kind (*parse_fn)(std::string_view)) {
  if (!j.is_string()) user_error("a form kind must be a string, got {}", j.dump());
  return parse_fn(j.get_ref<std::string const&>());
}

}  // namespace

std::string_view to_string(WorkKind kind) { return spell(kWork, kind); }
std::string_view to_string(QOrderKind kind) { return spell(kQOrder, kind); }
std::string_view to_string(RankKind kind) { return spell(kRank, kind); }
WorkKind parse_work_kind(std::string_view text) { return parse(kWork, text, "work"); }
QOrderKind parse_q_order_kind(std::string_view text) { return parse(kQOrder, text, "Q order"); }
RankKind parse_rank_kind(std::string_view text) { return parse(kRank, text, "rank"); }

void to_json(nlohmann::json& j, WorkKind kind) { j = std::string(to_string(kind)); }
void from_json(nlohmann::json const& j, WorkKind& kind) { kind = read(j, &parse_work_kind); }
void to_json(nlohmann::json& j, QOrderKind kind) { j = std::string(to_string(kind)); }
void from_json(nlohmann::json const& j, QOrderKind& kind) { kind = read(j, &parse_q_order_kind); }
void to_json(nlohmann::json& j, RankKind kind) { j = std::string(to_string(kind)); }
void from_json(nlohmann::json const& j, RankKind& kind) { kind = read(j, &parse_rank_kind); }

}  // namespace dash::codegen

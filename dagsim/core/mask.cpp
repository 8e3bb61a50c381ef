#include "dagsim/core/mask.h"

#include <charconv>

#include <fmt/format.h>

#include "dagsim/core/error.h"

namespace dash::sim {
namespace {

int parse_side(std::string const& text, std::string const& whole) {
  int value = -1;
  auto const* first = text.data();
  auto const* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc{} || ptr != last || value < 0) {
    user_error("bad mask '{}': window sides must be non-negative integers (window:L,R)", whole);
  }
  return value;
}

}  // namespace

Mask parse_mask(std::string const& text) {
  if (text == "full") return Mask{MaskKind::kFull, 0, 0};
  if (text == "causal") return Mask{MaskKind::kCausal, 0, 0};
  std::string const prefix = "window:";
  if (text.rfind(prefix, 0) == 0) {
    auto const rest = text.substr(prefix.size());
    auto const comma = rest.find(',');
    if (comma == std::string::npos) user_error("bad mask '{}': expected window:L,R", text);
    return Mask{MaskKind::kWindow, parse_side(rest.substr(0, comma), text),
                parse_side(rest.substr(comma + 1), text)};
  }
  user_error("unknown mask '{}': expected full, causal or window:L,R", text);
}

std::string to_string(Mask const& mask) {
  if (mask.kind == MaskKind::kWindow) return fmt::format("window:{},{}", mask.left, mask.right);
  return std::string(to_string(mask.kind));
}

std::string_view to_string(MaskKind kind) {
  switch (kind) {
    case MaskKind::kFull: return "full";
    case MaskKind::kCausal: return "causal";
    case MaskKind::kWindow: return "window";
  }
  return "?";
}

MaskKind parse_mask_kind(std::string_view text) {
  for (MaskKind const kind : {MaskKind::kFull, MaskKind::kCausal, MaskKind::kWindow}) {
    if (to_string(kind) == text) return kind;
  }
  user_error("unknown mask kind '{}': expected full, causal or window", text);
}

}  // namespace dash::sim

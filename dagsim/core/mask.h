#pragma once
// Attention mask kinds. Causal and sliding-window masks are bottom-right aligned (as FlashAttention):
// with offset = seqlen_k - seqlen_q, query row r sees key column c iff
//   r + offset - left <= c <= r + offset + right,
// where causal is left = infinity, right = 0 and full is both infinite.
#include <cstdint>
#include <string>
#include <string_view>

namespace dash::sim {

enum class MaskKind : std::uint8_t { kFull, kCausal, kWindow };

struct Mask {
  MaskKind kind = MaskKind::kFull;
  int left = 0;   ///< window only: columns visible to the left of the diagonal (>= 0)
  int right = 0;  ///< window only: columns visible to the right of the diagonal (>= 0)

  friend bool operator==(Mask const&, Mask const&) = default;
};

/// "full", "causal", "window:L,R". Throws UserError on anything else.
Mask parse_mask(std::string const& text);
std::string to_string(Mask const& mask);
/// The kind alone: "full", "causal", "window" (a kernel spec's mask); UserError on anything else.
std::string_view to_string(MaskKind kind);
MaskKind parse_mask_kind(std::string_view text);

}  // namespace dash::sim

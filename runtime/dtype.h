#pragma once
// The element type of Q, K, V, O, dO and the gradients: rt::DType (runtime/kernel_params.h, where
// the kernels see it) and its one spelling, "bf16" / "fp16", for the CLI, the code generator's
// specs and the benchmark records. Host only.
#include <optional>
#include <string_view>

#include "runtime/kernel_params.h"

namespace dash::rt {

constexpr char const* to_string(DType dtype) { return dtype == DType::kFp16 ? "fp16" : "bf16"; }

/// The dtype a spelling names; none for any other text.
constexpr std::optional<DType> parse_dtype(std::string_view text) {
  if (text == "bf16") return DType::kBf16;
  if (text == "fp16") return DType::kFp16;
  return std::nullopt;
}

}  // namespace dash::rt

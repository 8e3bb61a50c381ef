#pragma once
// The kernels' mask code (kMaskFull, kMaskCausal, kMaskWindow in runtime/kernel_params.h) of a
// mask kind: one checked conversion, for the host API and the code generator's constants.
#include "dagsim/core/error.h"
#include "dagsim/core/mask.h"
#include "runtime/kernel_params.h"

namespace dash::rt {

inline int mask_code(sim::MaskKind kind) {
  switch (kind) {
    case sim::MaskKind::kFull: return kMaskFull;
    case sim::MaskKind::kCausal: return kMaskCausal;
    case sim::MaskKind::kWindow: return kMaskWindow;
  }
  user_error("unknown mask kind {}", static_cast<int>(kind));
}

}  // namespace dash::rt

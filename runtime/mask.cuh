#pragma once
// The mask predicate of every kernel: whether query row `row` sees key column `col` of one
// sequence (lengths len_q, len_k). The band is bottom-right aligned (runtime/kernel_params.h).
#include "runtime/kernel_params.h"

namespace dash::rt {

__host__ __device__ __forceinline__ bool visible(Geometry const& g, int mask_kind, int row, int col, int len_q,
                                                 int len_k) {
  if (row >= len_q || col >= len_k) return false;
  if (mask_kind == kMaskFull) return true;
  int const diag = row + (len_k - len_q);
  int const left = mask_kind == kMaskCausal ? kUnboundedSide : g.mask_left;
  int const right = mask_kind == kMaskCausal ? 0 : g.mask_right;
  return col >= diag - left && col <= diag + right;
}

}  // namespace dash::rt

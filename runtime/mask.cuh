#pragma once
// The mask of every kernel: its band, and the predicate whether query row `row` sees key column
// `col` of one sequence (lengths len_q, len_k). The band is bottom-right aligned
// (runtime/kernel_params.h).
#include "runtime/kernel_params.h"

namespace dash::rt {

/// The band of a mask kind: query row r sees key columns diag - left .. diag + right, diag =
/// r + (len_k - len_q); an unbounded side is kUnboundedSide. The Geometry carries every kind's
/// band (runtime/attention.cpp); causal's is spelled out here too, so that a policy with a
/// compile-time mask kind folds it to constants.
struct Band {
  int left;
  int right;
};
__host__ __device__ __forceinline__ Band band(Geometry const& g, int mask_kind) {
  bool const causal = mask_kind == kMaskCausal;
  return Band{causal ? kUnboundedSide : g.mask_left, causal ? 0 : g.mask_right};
}

__host__ __device__ __forceinline__ bool visible(Geometry const& g, int mask_kind, int row, int col, int len_q,
                                                 int len_k) {
  if (row >= len_q || col >= len_k) return false;
  if (mask_kind == kMaskFull) return true;
  int const diag = row + (len_k - len_q);
  Band const b = band(g, mask_kind);
  return col >= diag - b.left && col <= diag + b.right;
}

}  // namespace dash::rt

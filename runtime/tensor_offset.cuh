#pragma once
// Element offsets in the user's tensors (TensorRef: FlashAttention's layout, strides in elements)
// as the kernels index them. Light header: part of the codegen template's parse.
#include <cstdint>

#include "runtime/kernel_params.h"

namespace dash::rt {

/// Offset of head `head` at the first row of a sequence: batch entry `b` of a fixed-length tensor,
/// or packed row `row0` (the sequence's cumulative start) of a varlen one.
__device__ __forceinline__ std::int64_t sequence_offset(Geometry const& g, TensorRef const& t, int b,
                                                        int row0, int head) {
  std::int64_t const off = g.varlen ? std::int64_t{row0} * t.row_stride : b * t.batch_stride;
  return off + std::int64_t{head} * t.head_stride;
}

/// Offset of head `head` at global row `row`: packed under varlen, else row = b * seqlen + r.
__device__ __forceinline__ std::int64_t row_offset(Geometry const& g, TensorRef const& t, int row,
                                                   int seqlen, int head) {
  std::int64_t const rows = g.varlen ? std::int64_t{row} * t.row_stride
                                     : (row / seqlen) * t.batch_stride + (row % seqlen) * t.row_stride;
  return rows + std::int64_t{head} * t.head_stride;
}

}  // namespace dash::rt

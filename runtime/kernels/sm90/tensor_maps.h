#pragma once
// Host side of the Hopper family's TMA: the tensor maps of one backward launch, encoded from the
// launch's parameters (user tensors and workspace) through the driver's cuTensorMapEncodeTiled.
#include <cuda.h>

#include "runtime/kernel_params.h"

namespace dash::rt::sm90 {

struct TensorMapBoxes {
  int head_dim = 0;
  int tile_m = 0;     ///< Q rows per box of Q, dO
  int tile_n = 0;     ///< KV rows per box of K, V
  int stat_rows = 0;  ///< rows per box of LSE, dPsum (boxes start on 16-byte boundaries)
};

/// The TMA descriptors of one launch, a __grid_constant__ parameter of the kernel.
struct TensorMaps {
  CUtensorMap q, k, v, dout;  ///< (d, rows, heads, batch) boxes of 64 columns, 128-byte swizzle
  CUtensorMap dk, dv;         ///< as K, V: the tile's epilogue stores them (unused under GQA)
  CUtensorMap lse, dpsum;     ///< (rows_padded, q_heads) fp32, boxes of one Q tile
};

/// Fills `maps`: Q, dO, K, V as (head_dim, rows, heads, batch) bf16/fp16 tensors with 64-column,
/// 128-byte swizzled boxes (varlen: rows = the packed tokens, one batch); LSE (log2) and dPsum as
/// (rows_padded, q_heads) fp32; dK, dV as K, V unless GQA (then fp32 accumulators take the
/// partials and the maps stay zero). Throws CudaError when the driver refuses a map.
void encode_tensor_maps(BwdParams const& p, DType dtype, TensorMapBoxes const& boxes, TensorMaps& maps);

}  // namespace dash::rt::sm90

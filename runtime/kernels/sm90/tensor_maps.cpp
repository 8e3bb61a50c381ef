#include "runtime/kernels/sm90/tensor_maps.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>

#include <fmt/format.h>

#include "runtime/cuda_check.h"

namespace dash::rt::sm90 {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult status{};
    DASH_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &status));
    if (status != cudaDriverEntryPointSuccess || f == nullptr) {
      throw CudaError("the CUDA driver has no cuTensorMapEncodeTiled (TMA needs a driver for CUDA 12 or later)");
    }
    fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  });
  return fn;
}

void encode(CUtensorMap& map, CUtensorMapDataType type, cuuint32_t rank, void const* data, cuuint64_t const* dims,
            cuuint64_t const* strides_bytes, cuuint32_t const* box, CUtensorMapSwizzle swizzle, char const* what) {
  cuuint32_t const element_strides[4] = {1, 1, 1, 1};
  CUresult const r = encode_fn()(&map, type, rank, const_cast<void*>(data), dims, strides_bytes, box, element_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw CudaError(fmt::format("cuTensorMapEncodeTiled refused the {} tensor map (CUresult {})", what, static_cast<int>(r)));
}

/// A user tensor (FlashAttention's layout) as (head_dim, rows, heads, batch).
void encode_user(CUtensorMap& map, TensorRef const& t, Geometry const& g, DType dtype, int rows, int heads,
                 int box_rows, char const* what) {
  auto const elem = cuuint64_t{2};
  cuuint64_t const dims[4] = {static_cast<cuuint64_t>(g.head_dim), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(g.varlen ? 1 : g.batch)};
  cuuint64_t const strides[3] = {static_cast<cuuint64_t>(t.row_stride) * elem,
                                 static_cast<cuuint64_t>(t.head_stride) * elem,
                                 static_cast<cuuint64_t>(g.varlen ? t.row_stride * rows : t.batch_stride) * elem};
  cuuint32_t const box[4] = {64, static_cast<cuuint32_t>(box_rows), 1, 1};
  encode(map, dtype == DType::kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, t.data,
         dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B, what);
}

void encode_stats(CUtensorMap& map, float const* data, Geometry const& g, int box_rows, char const* what) {
  cuuint64_t const dims[2] = {static_cast<cuuint64_t>(g.rows_padded), static_cast<cuuint64_t>(g.q_heads)};
  cuuint64_t const strides[1] = {static_cast<cuuint64_t>(g.rows_padded) * sizeof(float)};
  cuuint32_t const box[2] = {static_cast<cuuint32_t>(box_rows), 1};
  encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, data, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE, what);
}

}  // namespace

void encode_tensor_maps(BwdParams const& p, DType dtype, TensorMapBoxes const& boxes, TensorMaps& maps) {
  Geometry const& g = p.g;
  int const rows_q = g.varlen ? g.total_q : g.seqlen_q;
  int const rows_k = g.varlen ? g.total_k : g.seqlen_k;
  encode_user(maps.q, p.q, g, dtype, rows_q, g.q_heads, boxes.tile_m, "q");
  encode_user(maps.dout, p.dout, g, dtype, rows_q, g.q_heads, boxes.tile_m, "dout");
  encode_user(maps.k, p.k, g, dtype, rows_k, g.kv_heads, boxes.tile_n, "k");
  encode_user(maps.v, p.v, g, dtype, rows_k, g.kv_heads, boxes.tile_n, "v");
  if (g.q_heads == g.kv_heads) {
    encode_user(maps.dk, p.dk, g, dtype, rows_k, g.kv_heads, boxes.tile_n, "dk");
    encode_user(maps.dv, p.dv, g, dtype, rows_k, g.kv_heads, boxes.tile_n, "dv");
  }
  encode_stats(maps.lse, p.lse_log2, g, boxes.stat_rows, "lse");
  encode_stats(maps.dpsum, p.dpsum, g, boxes.stat_rows, "dpsum");
}

}  // namespace dash::rt::sm90

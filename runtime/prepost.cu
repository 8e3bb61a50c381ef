// Preprocess and postprocess kernels of the backward pass. Memory-bound, one warp per row.
#include <cstdint>

#include "runtime/cuda_check.h"
#include "runtime/kernels.h"
#include "runtime/warp_mma.cuh"

namespace dash::rt {
namespace {

constexpr int kThreads = 256;
constexpr float kLog2e = 1.4426950408889634f;

/// Element offset of (global row, head) in a user tensor: fixed-length tensors use the batch
/// stride (row = b * seqlen + r), varlen ones the packed row.
__device__ __forceinline__ std::int64_t user_offset(Geometry const& g, TensorRef const& t, int row,
                                                    int seqlen, int head) {
  std::int64_t const rows = g.varlen ? std::int64_t{row} * t.row_stride
                                     : (row / seqlen) * t.batch_stride + (row % seqlen) * t.row_stride;
  return rows + std::int64_t{head} * t.head_stride;
}

template <int D, int DT>
__global__ void __launch_bounds__(kThreads) preprocess_kernel(PreParams const p) {
  using E = warp::Elem<DT>;
  using T = typename E::T;
  Geometry const& g = p.g;
  int const lane = static_cast<int>(threadIdx.x) & 31;
  std::int64_t const warps = std::int64_t{gridDim.x} * (kThreads / 32);
  std::int64_t const gtid = std::int64_t{blockIdx.x} * kThreads + threadIdx.x;
  std::int64_t const rows = std::int64_t{g.rows_padded} * g.q_heads;
  for (std::int64_t w = gtid / 32; w < rows; w += warps) {
    int const h = static_cast<int>(w / g.rows_padded);
    int const row = static_cast<int>(w % g.rows_padded);
    std::int64_t const at = std::int64_t{h} * g.rows_padded + row;
    if (row >= g.total_q) {  // padding rows: read by tail tiles, never used; keep them defined
      if (lane == 0) p.lse_log2[at] = p.dpsum[at] = 0.f;
      continue;
    }
    T const* o = static_cast<T const*>(p.o.data) + user_offset(g, p.o, row, g.seqlen_q, h);
    T const* d = static_cast<T const*>(p.dout.data) + user_offset(g, p.dout, row, g.seqlen_q, h);
    float acc = 0.f;
#pragma unroll
    for (int c = lane; c < D; c += 32) acc += E::to_float(o[c]) * E::to_float(d[c]);
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, s);
    float* dq = p.dq_accum + (std::int64_t{row} * g.q_heads + h) * D;
#pragma unroll
    for (int c = lane; c < D; c += 32) dq[c] = 0.f;
    if (lane == 0) {
      p.dpsum[at] = acc;
      p.lse_log2[at] = p.lse[std::int64_t{h} * g.total_q + row] * kLog2e;  // +inf stays +inf
    }
  }
  for (std::int64_t x = gtid; x < p.num_tickets; x += std::int64_t{gridDim.x} * kThreads) p.tickets[x] = 0;
  if (p.dk_accum != nullptr) {
    std::int64_t const n = std::int64_t{g.total_k} * g.kv_heads * D;
    for (std::int64_t x = gtid; x < n; x += std::int64_t{gridDim.x} * kThreads) {
      p.dk_accum[x] = 0.f;
      p.dv_accum[x] = 0.f;
    }
  }
}

/// Converts a [rows][heads][D] fp32 accumulator (times `scale`) into a user tensor.
template <int D, int DT>
__device__ void convert_rows(Geometry const& g, float const* acc, TensorRef const& out, int rows,
                             int heads, int seqlen, float scale) {
  using E = warp::Elem<DT>;
  using T = typename E::T;
  std::int64_t const pairs = std::int64_t{rows} * heads * (D / 2);
  std::int64_t const stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t x = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; x < pairs; x += stride) {
    int const c = static_cast<int>(x % (D / 2)) * 2;
    std::int64_t const rh = x / (D / 2);
    int const h = static_cast<int>(rh % heads);
    int const row = static_cast<int>(rh / heads);
    float2 const v = *reinterpret_cast<float2 const*>(acc + rh * D + c);
    T* dst = static_cast<T*>(out.data) + user_offset(g, out, row, seqlen, h) + c;
    *reinterpret_cast<std::uint32_t*>(dst) = E::pack(v.x * scale, v.y * scale);
  }
}

template <int D, int DT>
__global__ void __launch_bounds__(kThreads) postprocess_kernel(PostParams const p) {
  convert_rows<D, DT>(p.g, p.dq_accum, p.dq, p.g.total_q, p.g.q_heads, p.g.seqlen_q, p.g.scale);
  if (p.dk_accum != nullptr) {  // dK was scaled in the main kernel
    convert_rows<D, DT>(p.g, p.dk_accum, p.dk, p.g.total_k, p.g.kv_heads, p.g.seqlen_k, 1.f);
    convert_rows<D, DT>(p.g, p.dv_accum, p.dv, p.g.total_k, p.g.kv_heads, p.g.seqlen_k, 1.f);
  }
}

template <int DT>
__global__ void __launch_bounds__(kThreads) zero_rows_kernel(Geometry const g, TensorRef const dk,
                                                             TensorRef const dv, int const* tiles) {
  using T = typename warp::Elem<DT>::T;
  int const* rec = tiles + 4 * blockIdx.x;
  int const b = rec[0];
  int const kvh = rec[1];
  int const row0 = g.cu_k[b];
  for (int r = rec[2] + static_cast<int>(threadIdx.y); r < rec[3]; r += static_cast<int>(blockDim.y)) {
    for (int c = static_cast<int>(threadIdx.x); c < g.head_dim; c += static_cast<int>(blockDim.x)) {
      int const row = row0 + r;
      static_cast<T*>(dk.data)[user_offset(g, dk, row, g.seqlen_k, kvh) + c] = warp::Elem<DT>::from_float(0.f);
      static_cast<T*>(dv.data)[user_offset(g, dv, row, g.seqlen_k, kvh) + c] = warp::Elem<DT>::from_float(0.f);
    }
  }
}

int grid_for(std::int64_t work) {
  std::int64_t const blocks = (work + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65536 ? 65536 : blocks));
}

}  // namespace

void launch_preprocess(PreParams const& p, DType dtype, cudaStream_t stream) {
  int const grid = grid_for(std::int64_t{p.g.rows_padded} * p.g.q_heads * 32);
  bool const bf16 = dtype == DType::kBf16;
  if (p.g.head_dim == 64) {
    bf16 ? preprocess_kernel<64, 0><<<grid, kThreads, 0, stream>>>(p)
         : preprocess_kernel<64, 1><<<grid, kThreads, 0, stream>>>(p);
  } else {
    bf16 ? preprocess_kernel<128, 0><<<grid, kThreads, 0, stream>>>(p)
         : preprocess_kernel<128, 1><<<grid, kThreads, 0, stream>>>(p);
  }
  DASH_CUDA_CHECK_LAUNCH();
}

void launch_postprocess(PostParams const& p, DType dtype, cudaStream_t stream) {
  int const grid = grid_for(std::int64_t{p.g.total_q} * p.g.q_heads * p.g.head_dim / 2);
  bool const bf16 = dtype == DType::kBf16;
  if (p.g.head_dim == 64) {
    bf16 ? postprocess_kernel<64, 0><<<grid, kThreads, 0, stream>>>(p)
         : postprocess_kernel<64, 1><<<grid, kThreads, 0, stream>>>(p);
  } else {
    bf16 ? postprocess_kernel<128, 0><<<grid, kThreads, 0, stream>>>(p)
         : postprocess_kernel<128, 1><<<grid, kThreads, 0, stream>>>(p);
  }
  DASH_CUDA_CHECK_LAUNCH();
}

void launch_zero_rows(Geometry const& g, TensorRef dk, TensorRef dv, int const* tiles, int count,
                      DType dtype, cudaStream_t stream) {
  if (count == 0) return;
  dim3 const block(32, 8);
  if (dtype == DType::kBf16) {
    zero_rows_kernel<0><<<count, block, 0, stream>>>(g, dk, dv, tiles);
  } else {
    zero_rows_kernel<1><<<count, block, 0, stream>>>(g, dk, dv, tiles);
  }
  DASH_CUDA_CHECK_LAUNCH();
}

}  // namespace dash::rt

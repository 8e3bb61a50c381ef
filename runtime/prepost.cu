// Preprocess and postprocess kernels of the backward pass. Memory-bound: 16-byte loads and stores,
// D / 8 lanes per (row, head).
#include <cstdint>

#include "runtime/cuda_check.h"
#include "runtime/kernels.h"
#include "runtime/tensor_offset.cuh"
#include "runtime/warp_mma.cuh"

namespace dash::rt {
namespace {

constexpr int kThreads = 256;
constexpr float kLog2e = 1.4426950408889634f;

/// A (row, head)'s D elements as D / 8 chunks of 16 bytes, one lane each: groups of D / 8 lanes
/// per row, kThreads / (D / 8) rows per block. Heads run along the grid's y (strided past 65535),
/// so no thread divides by a runtime value except for the batch of a fixed-length row.
template <int D>
constexpr int kChunkLanes = D / 8;
/// (row, head) pairs per block of the preprocess.
__host__ __device__ constexpr int rows_per_block(int head_dim) { return kThreads / (head_dim / 8); }

template <int D, int DT>
__global__ void __launch_bounds__(kThreads) preprocess_kernel(PreParams const p) {
  using E = warp::Elem<DT>;
  using T = typename E::T;
  static_assert(32 % kChunkLanes<D> == 0, "a row's lanes within one warp");
  constexpr int kRows = rows_per_block(D);
  Geometry const& g = p.g;
  int const sub = static_cast<int>(threadIdx.x) % kChunkLanes<D>;
  int const lane_row = static_cast<int>(threadIdx.x) / kChunkLanes<D>;
  for (int h = static_cast<int>(blockIdx.y); h < g.q_heads; h += static_cast<int>(gridDim.y)) {
    // row0 is the same for the whole block: every lane of a warp reaches the shuffles.
    for (std::int64_t row0 = std::int64_t{blockIdx.x} * kRows; row0 < g.rows_padded;
         row0 += std::int64_t{gridDim.x} * kRows) {
      int const row = static_cast<int>(row0) + lane_row;
      bool const real = row < g.total_q;  // padding rows: read by tail tiles, never used; keep them defined
      float acc = 0.f;
      if (real) {
        T const* o = static_cast<T const*>(p.o.data) + row_offset(g, p.o, row, g.seqlen_q, h) + sub * 8;
        T const* d = static_cast<T const*>(p.dout.data) + row_offset(g, p.dout, row, g.seqlen_q, h) + sub * 8;
        uint4 const ov = *reinterpret_cast<uint4 const*>(o);
        uint4 const dov = *reinterpret_cast<uint4 const*>(d);
        T const* oe = reinterpret_cast<T const*>(&ov);
        T const* de = reinterpret_cast<T const*>(&dov);
#pragma unroll
        for (int e = 0; e < 8; ++e) acc += E::to_float(oe[e]) * E::to_float(de[e]);
        if (p.zero_dq != 0 && p.dq_tile_floats == 0) {
          float4* dq = reinterpret_cast<float4*>(p.dq_accum + (std::int64_t{row} * g.q_heads + h) * D + sub * 8);
          dq[0] = dq[1] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
      }
#pragma unroll
      for (int s = kChunkLanes<D> / 2; s > 0; s >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, s);
      if (sub == 0 && row < g.rows_padded) {
        std::int64_t const at = std::int64_t{h} * g.rows_padded + row;
        p.dpsum[at] = acc;
        p.lse_log2[at] = real ? p.lse[std::int64_t{h} * g.total_q + row] * kLog2e : 0.f;  // +inf stays +inf
      }
    }
  }
  std::int64_t const gtid = (std::int64_t{blockIdx.y} * gridDim.x + blockIdx.x) * kThreads + threadIdx.x;
  std::int64_t const stride = std::int64_t{gridDim.x} * gridDim.y * kThreads;
  for (std::int64_t x = gtid; x < p.num_tickets; x += stride) p.tickets[x] = 0;
  if (p.zero_dq != 0 && p.dq_tile_floats > 0) {
    for (std::int64_t x = gtid; x < p.dq_tile_floats / 4; x += stride) {
      reinterpret_cast<float4*>(p.dq_accum)[x] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
  }
  if (p.dk_accum != nullptr) {
    std::int64_t const n = std::int64_t{g.total_k} * g.kv_heads * D;
    for (std::int64_t x = gtid; x < n; x += stride) {
      p.dk_accum[x] = 0.f;
      p.dv_accum[x] = 0.f;
    }
  }
}

/// Converts a [rows][heads][D] fp32 accumulator (times `scale`) into a user tensor, 8 elements
/// (two 16-byte loads, one 16-byte store) per thread and step.
template <int D, int DT>
__device__ void convert_rows(Geometry const& g, float const* acc, TensorRef const& out, int rows,
                             int heads, int seqlen, float scale) {
  using E = warp::Elem<DT>;
  using T = typename E::T;
  std::int64_t const chunks = std::int64_t{rows} * kChunkLanes<D>;
  std::int64_t const stride = std::int64_t{gridDim.x} * blockDim.x;
  for (int h = static_cast<int>(blockIdx.y); h < heads; h += static_cast<int>(gridDim.y)) {
    for (std::int64_t x = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; x < chunks; x += stride) {
      int const row = static_cast<int>(x / kChunkLanes<D>);
      int const c = static_cast<int>(x % kChunkLanes<D>) * 8;
      float4 const* src = reinterpret_cast<float4 const*>(acc + (std::int64_t{row} * heads + h) * D + c);
      float4 const a = src[0];
      float4 const b = src[1];
      uint4 const v{E::pack(a.x * scale, a.y * scale), E::pack(a.z * scale, a.w * scale),
                    E::pack(b.x * scale, b.y * scale), E::pack(b.z * scale, b.w * scale)};
      *reinterpret_cast<uint4*>(static_cast<T*>(out.data) + row_offset(g, out, row, seqlen, h) + c) = v;
    }
  }
}

/// The sequence (batch entry) of packed row `row`: the last b with cu_q[b] <= row.
__device__ __forceinline__ int row_batch(Geometry const& g, int row) {
  int lo = 0;
  int hi = g.batch - 1;
  while (lo < hi) {
    int const mid = (lo + hi + 1) / 2;
    if (g.cu_q[mid] <= row) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

/// Converts a tile-major dQ accumulator (TileMajorDq, times the softmax scale) into the user's dQ,
/// 8 elements per thread and step as convert_rows.
template <int D, int DT>
__device__ void convert_tile_major(Geometry const& g, float const* acc, TileMajorDq const& layout, TensorRef const& out) {
  using E = warp::Elem<DT>;
  using T = typename E::T;
  std::int64_t const chunks = std::int64_t{g.total_q} * kChunkLanes<D>;
  std::int64_t const stride = std::int64_t{gridDim.x} * blockDim.x;
  int const tm = layout.tile_m;
  for (int h = static_cast<int>(blockIdx.y); h < g.q_heads; h += static_cast<int>(gridDim.y)) {
    for (std::int64_t x = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; x < chunks; x += stride) {
      int const row = static_cast<int>(x / kChunkLanes<D>);
      int const c = static_cast<int>(x % kChunkLanes<D>) * 8;
      int const lo = row_batch(g, row);
      int const r = row - g.cu_q[lo];
      int const len = g.cu_q[lo + 1] - g.cu_q[lo];
      std::int64_t const tile = layout.dq_tile_base[lo] + std::int64_t{h} * ((len + tm - 1) / tm) + r / tm;
      float const* t = acc + tile * tm * D;
      // Column pairs (c + 2 k, c + 2 k + 1) are adjacent floats of the layout.
      float const s = g.scale;
      std::uint32_t v4[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float2 const a = *reinterpret_cast<float2 const*>(t + tile_major_offset(r % tm, c + 2 * k, D));
        v4[k] = E::pack(a.x * s, a.y * s);
      }
      uint4 const v{v4[0], v4[1], v4[2], v4[3]};
      *reinterpret_cast<uint4*>(static_cast<T*>(out.data) + row_offset(g, out, row, g.seqlen_q, h) + c) = v;
    }
  }
}

/// The same for the transposed tile-major layout (tile_major_offset_t: Q tiles of a height that is
/// not a multiple of 64), where row pairs, not column pairs, are adjacent: a thread whose row is
/// even within its sequence converts it and the next row, 8 columns each (8-byte loads of the row
/// pair, one 16-byte store per row); odd rows' threads have nothing to do.
template <int D, int DT>
__device__ void convert_tile_major_t(Geometry const& g, float const* acc, TileMajorDq const& layout, TensorRef const& out) {
  using E = warp::Elem<DT>;
  using T = typename E::T;
  std::int64_t const chunks = std::int64_t{g.total_q} * kChunkLanes<D>;
  std::int64_t const stride = std::int64_t{gridDim.x} * blockDim.x;
  int const tm = layout.tile_m;
  for (int h = static_cast<int>(blockIdx.y); h < g.q_heads; h += static_cast<int>(gridDim.y)) {
    for (std::int64_t x = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; x < chunks; x += stride) {
      int const row = static_cast<int>(x / kChunkLanes<D>);
      int const c = static_cast<int>(x % kChunkLanes<D>) * 8;
      int const lo = row_batch(g, row);
      int const r = row - g.cu_q[lo];
      if (r % 2 != 0) continue;  // converted with the row before it
      int const len = g.cu_q[lo + 1] - g.cu_q[lo];
      std::int64_t const tile = layout.dq_tile_base[lo] + std::int64_t{h} * ((len + tm - 1) / tm) + r / tm;
      float const* t = acc + tile * tm * D;
      float const s = g.scale;
      std::uint32_t v0[4];
      std::uint32_t v1[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float2 const a = *reinterpret_cast<float2 const*>(t + tile_major_offset_t(r % tm, c + 2 * k, tm));
        float2 const b = *reinterpret_cast<float2 const*>(t + tile_major_offset_t(r % tm, c + 2 * k + 1, tm));
        v0[k] = E::pack(a.x * s, b.x * s);  // row r, columns c + 2 k and + 1
        v1[k] = E::pack(a.y * s, b.y * s);  // row r + 1
      }
      T* const o = static_cast<T*>(out.data) + row_offset(g, out, row, g.seqlen_q, h) + c;
      *reinterpret_cast<uint4*>(o) = uint4{v0[0], v0[1], v0[2], v0[3]};
      if (r + 1 < len) {
        *reinterpret_cast<uint4*>(static_cast<T*>(out.data) + row_offset(g, out, row + 1, g.seqlen_q, h) + c) =
            uint4{v1[0], v1[1], v1[2], v1[3]};
      }
    }
  }
}

template <int D, int DT>
__global__ void __launch_bounds__(kThreads) postprocess_kernel(PostParams const p) {
  if (p.dq_layout.tile_m > 0 && p.dq_layout.tile_m % 64 != 0) {
    convert_tile_major_t<D, DT>(p.g, p.dq_accum, p.dq_layout, p.dq);
  } else if (p.dq_layout.tile_m > 0) {
    convert_tile_major<D, DT>(p.g, p.dq_accum, p.dq_layout, p.dq);
  } else {
    convert_rows<D, DT>(p.g, p.dq_accum, p.dq, p.g.total_q, p.g.q_heads, p.g.seqlen_q, p.g.scale);
  }
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
      static_cast<T*>(dk.data)[row_offset(g, dk, row, g.seqlen_k, kvh) + c] = warp::Elem<DT>::from_float(0.f);
      static_cast<T*>(dv.data)[row_offset(g, dv, row, g.seqlen_k, kvh) + c] = warp::Elem<DT>::from_float(0.f);
    }
  }
}

/// Blocks of kThreads for `work` threads, at least one; kernels stride past the cap.
int grid_for(std::int64_t work) {
  std::int64_t const blocks = (work + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 65536 ? 65536 : blocks));
}
/// The grid's y extent for `heads` heads (kernels stride past CUDA's limit of 65535).
int heads_grid(int heads) { return heads < 1 ? 1 : (heads > 65535 ? 65535 : heads); }

}  // namespace

void launch_preprocess(PreParams const& p, DType dtype, cudaStream_t stream) {
  int const rows = rows_per_block(p.g.head_dim);
  dim3 const grid(static_cast<unsigned>(grid_for(std::int64_t{p.g.rows_padded + rows - 1} / rows * kThreads)),
                  static_cast<unsigned>(heads_grid(p.g.q_heads)));
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
  int const rows = p.dk_accum != nullptr && p.g.total_k > p.g.total_q ? p.g.total_k : p.g.total_q;
  dim3 const grid(static_cast<unsigned>(grid_for(std::int64_t{rows} * (p.g.head_dim / 8))),
                  static_cast<unsigned>(heads_grid(p.g.q_heads)));
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

// Forward kernel (portable path): O and LSE, so that the backward pass runs on real data.
// One CTA of 4 warps per (Q tile of 64 rows, q head, batch); warp w owns Q rows 16w..16w+15 and
// walks the KV tiles of 64 rows that its Q tile sees, with the online softmax in base 2.
#include <cmath>
#include <cstdint>

#include "runtime/cuda_check.h"
#include "runtime/kernels.h"
#include "runtime/mask.cuh"
#include "runtime/smem_opt_in.h"
#include "runtime/tensor_offset.cuh"
#include "runtime/warp_mma.cuh"

namespace dash::rt {
namespace {

constexpr int kFwdM = 64;
constexpr int kFwdN = 64;
constexpr int kFwdThreads = 128;

template <int D, int DT>
struct FwdSmem {
  using T = typename warp::Elem<DT>::T;
  T q[kFwdM * D];
  T k[kFwdN * D];
  T v[kFwdN * D];
};

template <int D, int DT>
__global__ void __launch_bounds__(kFwdThreads) fwd_kernel(FwdParams const p) {
  using E = warp::Elem<DT>;
  using T = typename E::T;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  auto& sm = *reinterpret_cast<FwdSmem<D, DT>*>(smem_raw);
  Geometry const& g = p.g;
  int const b = static_cast<int>(blockIdx.z);
  int const h = static_cast<int>(blockIdx.y);
  int const i = static_cast<int>(blockIdx.x);
  int const q_row0 = g.cu_q[b];
  int const k_row0 = g.cu_k[b];
  int const len_q = g.cu_q[b + 1] - q_row0;
  int const len_k = g.cu_k[b + 1] - k_row0;
  int const m0 = i * kFwdM;
  if (m0 >= len_q) return;
  int const kvh = h / (g.q_heads / g.kv_heads);
  int const tid = static_cast<int>(threadIdx.x);
  int const lane = tid & 31;
  int const wid = tid >> 5;
  int const gq = lane >> 2;
  int const t4 = lane & 3;
  Band const bd = band(g, g.mask_kind);
  int const left = bd.left;
  int const right = bd.right;
  int const offset = len_k - len_q;
  int const last_row = min(m0 + kFwdM, len_q) - 1;
  int const col_lo = max(0, m0 + offset - left);
  int const col_hi = min(len_k - 1, last_row + offset + right);

  T const* q_ptr = static_cast<T const*>(p.q.data) + sequence_offset(g, p.q, b, q_row0, h) + m0 * p.q.row_stride;
  T const* k_ptr = static_cast<T const*>(p.k.data) + sequence_offset(g, p.k, b, k_row0, kvh);
  T const* v_ptr = static_cast<T const*>(p.v.data) + sequence_offset(g, p.v, b, k_row0, kvh);
  warp::load_tile_async<D, kFwdM, kFwdThreads>(sm.q, q_ptr, p.q.row_stride, min(kFwdM, len_q - m0));
  warp::cp_async_commit();

  float o[D / 8][4];
#pragma unroll
  for (int nb = 0; nb < D / 8; ++nb) {
#pragma unroll
    for (int e = 0; e < 4; ++e) o[nb][e] = 0.f;
  }
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};

  for (int jt = col_lo / kFwdN; col_hi >= col_lo && jt <= col_hi / kFwdN; ++jt) {
    int const n0 = jt * kFwdN;
    __syncthreads();  // the previous tile's P V read sm.v
    warp::load_tile_async<D, kFwdN, kFwdThreads>(sm.k, k_ptr + n0 * p.k.row_stride, p.k.row_stride,
                                                 min(kFwdN, len_k - n0));
    warp::load_tile_async<D, kFwdN, kFwdThreads>(sm.v, v_ptr + n0 * p.v.row_stride, p.v.row_stride,
                                                 min(kFwdN, len_k - n0));
    warp::cp_async_commit();
    warp::cp_async_wait_all();
    __syncthreads();

    float s[kFwdN / 8][4];
#pragma unroll
    for (int nb = 0; nb < kFwdN / 8; ++nb) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[nb][e] = 0.f;
    }
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      std::uint32_t a[4];
      warp::ldmatrix_x4(a, warp::smem_addr(sm.q + warp::a_rowmajor<D>(lane, wid * 16, kk * 16)));
#pragma unroll
      for (int np = 0; np < kFwdN / 16; ++np) {
        std::uint32_t bk[4];
        warp::ldmatrix_x4(bk, warp::smem_addr(sm.k + warp::b_nmajor<D>(lane, np * 16, kk * 16)));
        warp::mma<DT>(s[2 * np], a, bk[0], bk[1]);
        warp::mma<DT>(s[2 * np + 1], a, bk[2], bk[3]);
      }
    }
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int nb = 0; nb < kFwdN / 8; ++nb) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int const row = m0 + wid * 16 + gq + (e >> 1) * 8;
        int const col = n0 + nb * 8 + 2 * t4 + (e & 1);
        int const diag = row + offset;
        bool const on = row < len_q && col < len_k && col >= diag - left && col <= diag + right;
        s[nb][e] = on ? s[nb][e] * g.scale_log2 : -INFINITY;
        tile_max[e >> 1] = fmaxf(tile_max[e >> 1], s[nb][e]);
      }
    }
    float corr[2];
    float sub[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
      float const new_max = fmaxf(row_max[r], tile_max[r]);
      // A row that has seen no key yet keeps max -inf: subtract 0 so exp2 gives 0, not NaN.
      sub[r] = new_max == -INFINITY ? 0.f : new_max;
      corr[r] = row_max[r] == -INFINITY ? 0.f : exp2f(row_max[r] - sub[r]);
      row_max[r] = new_max;
      row_sum[r] *= corr[r];
    }
#pragma unroll
    for (int nb = 0; nb < D / 8; ++nb) {
#pragma unroll
      for (int e = 0; e < 4; ++e) o[nb][e] *= corr[e >> 1];
    }
    std::uint32_t pa[kFwdN / 16][4];
#pragma unroll
    for (int nb = 0; nb < kFwdN / 8; ++nb) {
      float pv[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        pv[e] = exp2f(s[nb][e] - sub[e >> 1]);
        row_sum[e >> 1] += pv[e];
      }
      pa[nb / 2][(nb & 1) * 2 + 0] = E::pack(pv[0], pv[1]);
      pa[nb / 2][(nb & 1) * 2 + 1] = E::pack(pv[2], pv[3]);
    }
#pragma unroll
    for (int kk = 0; kk < kFwdN / 16; ++kk) {
#pragma unroll
      for (int np = 0; np < D / 16; ++np) {
        std::uint32_t bv[4];
        warp::ldmatrix_x4_trans(bv, warp::smem_addr(sm.v + warp::b_kmajor<D>(lane, np * 16, kk * 16)));
        warp::mma<DT>(o[2 * np], pa[kk], bv[0], bv[1]);
        warp::mma<DT>(o[2 * np + 1], pa[kk], bv[2], bv[3]);
      }
    }
  }

  T* o_ptr = static_cast<T*>(p.o.data) + sequence_offset(g, p.o, b, q_row0, h);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 1);
    row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 2);
    int const row = m0 + wid * 16 + gq + r * 8;
    if (row >= len_q) continue;
    bool const empty = row_sum[r] == 0.f;
    float const inv = empty ? 0.f : 1.f / row_sum[r];
#pragma unroll
    for (int nb = 0; nb < D / 8; ++nb) {
      *reinterpret_cast<std::uint32_t*>(o_ptr + row * p.o.row_stride + nb * 8 + 2 * t4) =
          E::pack(o[nb][2 * r] * inv, o[nb][2 * r + 1] * inv);
    }
    if (t4 == 0) {
      // Rows that see no key get +inf, so the backward's exp2(s - lse) is 0 there, never NaN.
      float const lse = empty ? INFINITY : (row_max[r] + log2f(row_sum[r])) * 0.69314718055994530942f;
      p.lse[std::int64_t{h} * g.total_q + q_row0 + row] = lse;
    }
  }
}

template <int D, int DT>
void launch_fwd_variant(FwdParams const& p, cudaStream_t stream) {
  constexpr int kSmem = static_cast<int>(sizeof(FwdSmem<D, DT>));
  opt_in_dynamic_smem(reinterpret_cast<void const*>(&fwd_kernel<D, DT>), kSmem);
  dim3 const grid((p.g.seqlen_q + kFwdM - 1) / kFwdM, p.g.q_heads, p.g.batch);
  fwd_kernel<D, DT><<<grid, kFwdThreads, kSmem, stream>>>(p);
  DASH_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_forward(FwdParams const& p, DType dtype, cudaStream_t stream) {
  bool const bf16 = dtype == DType::kBf16;
  if (p.g.head_dim == 64) {
    bf16 ? launch_fwd_variant<64, 0>(p, stream) : launch_fwd_variant<64, 1>(p, stream);
  } else {
    bf16 ? launch_fwd_variant<128, 0>(p, stream) : launch_fwd_variant<128, 1>(p, stream);
  }
}

}  // namespace dash::rt

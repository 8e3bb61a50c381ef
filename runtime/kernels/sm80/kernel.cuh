#pragma once
// Backward main kernel of the sm80 family (portable, sm_80+: mma.sync m16n8k16, ldmatrix,
// cp.async), templated on its schedule policy (runtime/schedule/protocol.cuh): the generic
// instantiation with the table-driven policy is runtime/kernels/sm80/generic.cu, and every
// generated/*.cu includes this header once with its own specialized policy. Codegen never reads
// this file, so editing the kernel leaves generated/ as it is.
//
// One CTA (8 warps) owns one KV tile of kTileN = 128 rows and walks the Q tiles the schedule gives
// it (TM rows: 128 at head_dim 64, 64 at 128, family_tile_m). Per step, transposed so that dK/dV
// stay in registers for the whole walk:
//   S^T = K Q^T, P^T = exp2(S^T * scale_log2 - lse_log2), dP^T = V dO^T,
//   dS^T = P^T o (dP^T - dPsum), dV += P^T dO, dK += dS^T Q, dQ_i = dS K.
// S^T and dP^T are split over 4 x 2 warps (32 KV rows x TM/2 Q rows each). For the same 32 KV rows
// the warp of the first Q half then computes dV and the other dK, over all D columns: each keeps its
// own half of P^T (dV) or dS^T (dK) in registers and reads the other half from shared memory. That
// reads a sixth (d64) or a twelfth (d128) fewer shared-memory bytes per step than splitting dK and
// dV by head-dim halves, where every warp read both P^T and dS^T whole. dQ is split over
// TM/32 x 8/(TM/32) warps of 32 x 32.
// Shared memory: 194 KB (d64) and 193 KB (d128), beyond the 99 KB per block of sm_86 / sm_89;
// ctas_per_sm then reports 0 and the host refuses the problem.
// Per step: Q, dO, LSE and dPsum of the next step load (cp.async) while this one computes; two CTA
// barriers, at the top (the tiles landed, the previous step's buffers are free) and after the
// softmax (P^T and dS^T complete); each warp stages its dQ partial in its own slice of a dQ buffer
// (no barrier) and adds it with 16-byte vector reductions. Deterministic mode:
// each warp reads the tile's ticket (acquire) before its dQ GEMM and spins only if that read was
// too early; the ticket is released after a later CTA barrier (docs/schedule-protocol.md). When
// every dQ tile has a contributor, rank 0 stores instead of adding (dq_accum is not zeroed then).
#include <cstdint>
#include <type_traits>

#include "runtime/cuda_check.h"
#include "runtime/kernel_params.h"
#include "runtime/kernel_trace.cuh"
#include "runtime/kernels/family.h"
#include "runtime/mask.cuh"
#include "runtime/registry.h"
#include "runtime/schedule/protocol.cuh"
#include "runtime/smem_opt_in.h"
#include "runtime/tensor_offset.cuh"
#include "runtime/ticket.cuh"
#include "runtime/warp_mma.cuh"

namespace dash::rt::sm80 {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kTileN = family_tile_n(KernelFamily::kSm80);
static_assert(kTileN == 32 * 4 && kWarps == 8, "4 x 32 KV rows by 2 Q-row halves (the dV and dK roles)");
/// Q rows of a step at head dim D: the policy's, or the family's where the policy leaves it open.
template <BwdSchedule P, int D>
inline constexpr int kTileMOf = P::kTileM > 0 ? P::kTileM : family_tile_m(KernelFamily::kSm80, D);

// ---- Tickets (runtime/ticket.cuh) -----------------------------------------------------------
/// Spins until the tile's ticket equals `rank`. CTA-wide (kWarpWide false): thread 0 spins and the
/// barrier publishes its acquire to the whole CTA. Warp-wide: lane 0 of each warp spins and
/// __syncwarp (which orders memory among the warp's threads) publishes it to its warp, so each warp
/// starts its adds as soon as it is ready, without a CTA barrier. Either way no thread's add can
/// start before every lower rank's adds are complete. `seen`: what an earlier ld_acquire of the
/// same ticket by the spinning thread returned (-1: none); if it is already `rank` there is no
/// spin, and the acquire still holds, since an acquire orders every later access of its thread.
template <bool kWarpWide>
__device__ __forceinline__ void wait_turn(int const* ticket, int rank, int tile, TicketWatchdog const& wd,
                                          int seen = -1) {
  if ((threadIdx.x & (kWarpWide ? 31 : 0xffffffff)) == 0 && seen != rank) ticket::spin_until(ticket, rank, tile, wd);
  if constexpr (kWarpWide) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}

/// Every thread's adds are issued before this point. The barrier orders them (CTA scope) before
/// thread 0's st.release.gpu, and a release is cumulative in the PTX memory model: everything
/// before it in causality order, the other threads' reds included, is performed at gpu scope
/// before the new ticket value can be observed (on sm_90 the store is preceded by MEMBAR.GPU,
/// which waits until those reds are complete in L2). The next rank's acquire therefore observes
/// every add of this rank complete, not merely issued. (A release after a mere "source read" wait,
/// as FA3's bulk .read wait, would let the next rank add before this one landed.) Callers that
/// already passed a barrier after their adds call release_after_barrier directly. `next_rank`:
/// the ticket value that lets the next contribution in.
__device__ __forceinline__ void release_after_barrier(int* ticket, int next_rank) {
  if (threadIdx.x == 0) ticket::st_release(ticket, next_rank);
}
__device__ __forceinline__ void release_turn(int* ticket, int next_rank) {
  __syncthreads();
  release_after_barrier(ticket, next_rank);
}

/// Adds two adjacent floats (8-byte aligned): one vector reduction on sm_90, halving the
/// reduction instructions of the dQ hand-off; two scalar ones before.
__device__ __forceinline__ void red_add2(float* p, float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a), "f"(b) : "memory");
#else
  asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(p), "f"(a) : "memory");
  asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(p + 1), "f"(b) : "memory");
#endif
}

/// Adds four adjacent floats (16-byte aligned): one vector reduction on sm_90, four before.
__device__ __forceinline__ void red_add4(float* p, float4 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z),
               "f"(v.w)
               : "memory");
#else
  red_add2(p, v.x, v.y);
  red_add2(p + 2, v.z, v.w);
#endif
}

// ---- The kernel -------------------------------------------------------------------------------
/// Shared memory. Q, dO, LSE and dPsum are double-buffered (stage t % 2): step t + 1's tiles load
/// during the whole of step t. Every tile starts on a 128-byte boundary (swz_frag needs it).
template <int D, int DT, int kRowsM>
struct SharedStorage {
  using T = typename warp::Elem<DT>::T;
  static constexpr int TM = kRowsM;
  struct Stage {
    T q[TM * D];
    T dout[TM * D];
    float lse[TM];
    float dpsum[TM];
  };
  T k[kTileN * D];
  T v[kTileN * D];
  Stage stage[2];
  T pt[kTileN * TM];  // P^T, [kv row][q row]
  T ds[kTileN * TM];  // dS^T, [kv row][q row]
  float dq[TM * D];   // each warp's dQ partial on its way to the reductions, a slice per warp
};


// The policy is the last template parameter, so that the mangled name still begins
// bwd_main_kernelILi<D>ELi<DT>E, which scripts/ptxas_summary.py reads.
template <int D, int DT, BwdSchedule P>
__global__ void __launch_bounds__(kThreads, 1) bwd_main_kernel(BwdParams const p) {
  static_assert(P::kTileN == kTileN, "the policy's KV tile is the kernel's");
  using E = warp::Elem<DT>;
  using T = typename E::T;
  using Smem = SharedStorage<D, DT, kTileMOf<P, D>>;
  using Stage = typename Smem::Stage;
  constexpr int TM = Smem::TM;
  static_assert(TM == 64 || TM == 128, "Q tiles of 64 or 128 rows (two or four 16-row blocks per warp)");
  static_assert(2 * TM <= kThreads, "one thread per LSE and per dPsum entry of a Q tile");
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  Smem& sm = *reinterpret_cast<Smem*>(smem_raw);
  constexpr std::uint32_t kStageBytes = sizeof(Stage);
  constexpr std::uint32_t kDoutOff = TM * D * sizeof(T);  // dout from q within a stage
  static_assert(kStageBytes % 128 == 0 && kDoutOff % 128 == 0 && (kTileN * D * sizeof(T)) % 128 == 0,
                "tiles on 128-byte boundaries");

  Geometry const& g = p.g;
  int const mask_kind = P::kMaskKind >= 0 ? P::kMaskKind : g.mask_kind;
  int const tid = static_cast<int>(threadIdx.x);
  int const lane = tid & 31;
  int const wid = tid >> 5;
  int const gq = lane >> 2;  // fragment row group
  int const t4 = lane & 3;   // fragment column pair
  int const group = g.q_heads / g.kv_heads;
  bool const gqa = group > 1;

  // Per-lane ldmatrix bases (warp::swz_frag): each fragment load below is one XOR with a constant
  // and an immediate offset.
  std::uint32_t const smem0 = warp::smem_addr(smem_raw);
  if (smem0 % 128 != 0) __trap();  // never on any CUDA target; the address arithmetic needs it
  std::uint32_t const k_p1 = warp::swz_lane<D>(warp::smem_addr(sm.k), warp::p1_row(lane), warp::p1_chunk(lane));
  std::uint32_t const v_p1 = k_p1 + kTileN * D * sizeof(T);
  std::uint32_t const q_p1 = warp::swz_lane<D>(warp::smem_addr(sm.stage[0].q), warp::p1_row(lane), warp::p1_chunk(lane));
  std::uint32_t const q_p2 = warp::swz_lane<D>(warp::smem_addr(sm.stage[0].q), warp::p2_row(lane), warp::p2_chunk(lane));
  // dQ = dS K: warp w takes kDqRows Q rows from mq0 and kDqCols d columns from d0 (32 x 32 for
  // both tile shapes of family_tile_m: the fewest shared-memory bytes per warp for dS and K).
  constexpr int kDqRows = 32;
  constexpr int kDqRowGroups = TM / kDqRows;
  constexpr int kDqCols = D / (kWarps / kDqRowGroups);
  static_assert(TM * D == 64 * 128 && kDqRowGroups * (kWarps / kDqRowGroups) == kWarps,
                "a 32 x 32 dQ block per warp covers the tile once");
  // ds_dq below adds two chunk offsets by XOR: (mq0 / 8) % 8 is 0 or 4 and the fragment's 2 mb is
  // 0 or 2, so no bit carries.
  static_assert(kDqRows == 32, "(mq0 / 8) % 8 in {0, 4}, 2 mb in {0, 2}");
  int const mq0 = (wid % kDqRowGroups) * kDqRows;
  int const d0 = (wid / kDqRowGroups) * kDqCols;
  std::uint32_t const ds_dq = warp::swz_frag<TM>(
      warp::swz_lane<TM>(warp::smem_addr(sm.ds), warp::p2_row(lane), warp::p2_chunk(lane)), 0, mq0 / 8);
  // S^T / dP^T and the softmax: warp w takes KV rows 32 wkv.. and Q rows kWarpQ wq.. (4 x 2 warps).
  // Then the warp of role 0 (wq = 0) computes dV and the one of role 1 dK for those 32 KV rows and
  // all D columns: each keeps its own Q half of P^T (role 0) or dS^T (role 1) in registers and
  // reads the other half from shared memory, where the other role's warp put it.
  int const wkv = wid & 3;
  int const wq = wid >> 2;
  int const role = wq;
  constexpr int kWarpQ = TM / 2;       // Q rows of a warp's S^T / dP^T block
  constexpr int kQn8 = kWarpQ / 8;     // its n8 blocks
  static_assert(kQn8 % 2 == 0, "n8 blocks in pairs (one ldmatrix.x4 of Q and of dO per pair)");
  constexpr std::uint32_t kPtToDs = kTileN * TM * sizeof(T);  // sm.ds from sm.pt
  std::uint32_t const pt_p1 =
      warp::swz_lane<TM>(warp::smem_addr(sm.pt), warp::p1_row(lane), warp::p1_chunk(lane));
  // The dV / dK GEMM: A of the other Q half (P^T for role 0, dS^T for role 1; chunk offsets
  // 0 or TM / 16 and 2 u share no bit), B from dO (role 0) or Q (role 1) of the stage.
  std::uint32_t const a_other = warp::swz_frag<TM>(pt_p1 + (role == 0 ? 0u : kPtToDs), 0, (1 - role) * (TM / 16));
  std::uint32_t const b_p1 = q_p1 + (role == 0 ? kDoutOff : 0u);
  int const own_q = role * kWarpQ;
  int const other_q = (1 - role) * kWarpQ;
  // P^T / dS^T stores: row 32 wkv + gq (+ 16 mb + 8 half), columns kWarpQ wq + 8 nb + 2 t4: bits
  // 4..6 of the row's base hold gq, flipped by the low three bits of the chunk kQn8 wq + nb.
  std::uint32_t const pt_st = static_cast<std::uint32_t>(
      reinterpret_cast<unsigned char*>(sm.pt) - smem_raw + (wkv * 32 + gq) * TM * 2 + gq * 16 + t4 * 4);

  // Deterministic mode: the dQ ticket of the previous step, released after a later CTA barrier
  // instead of behind a barrier of its own: one barrier less per step, and the reds have that
  // long to drain before the release's fence waits for them: the top barrier of the next step (or
  // the end of the item). Releasing after the next step's softmax barrier instead measured slower
  // with 128-row tiles at head_dim 64 on every strategy (docs/results/2026-11-29-h200-tile128.md).
  int* pending_ticket = nullptr;
  int pending_value = 0;
  // Kernel traces (DASH_KERNEL_TRACE builds): thread 0 stamps the CTA's steps (n counts them over
  // its items) and items. One set of warps computes and adds, so the writer's "taken" is the end of
  // the compute.
  [[maybe_unused]] int n = 0;
  auto const stamp_step = [&](int e) {
    if constexpr (kKernelTraces) {
      if (tid == 0) trace::step(p.trace, n, e);
    }
  };
  auto const stamp_item = [&](int k, int e) {
    if constexpr (kKernelTraces) {
      if (tid == 0) trace::item(p.trace, k, e);
    }
  };
  if constexpr (kKernelTraces) {
    if (tid == 0) trace::mark(p.trace, false);
  }
  auto release_pending = [&] {
    if (pending_ticket != nullptr) {
      release_after_barrier(pending_ticket, pending_value);
      pending_ticket = nullptr;
    }
  };
  for (int k = 0;; ++k) {
    WorkItemRef const item = P::next_work_item(p.tables, static_cast<int>(blockIdx.x), k);
    if (item.batch < 0) break;
    stamp_item(k, kItemWait);
    int const b = item.batch;
    int const h = item.head;
    int const kvh = h / group;
    int const j = item.kv_tile;
    int const q_row0 = g.cu_q[b];
    int const k_row0 = g.cu_k[b];
    int const len_q = g.cu_q[b + 1] - q_row0;
    int const len_k = g.cu_k[b + 1] - k_row0;
    int const n0 = j * kTileN;

    T const* q_ptr = static_cast<T const*>(p.q.data) + sequence_offset(g, p.q, b, q_row0, h);
    T const* do_ptr = static_cast<T const*>(p.dout.data) + sequence_offset(g, p.dout, b, q_row0, h);
    T const* k_ptr = static_cast<T const*>(p.k.data) + sequence_offset(g, p.k, b, k_row0, kvh) + n0 * p.k.row_stride;
    T const* v_ptr = static_cast<T const*>(p.v.data) + sequence_offset(g, p.v, b, k_row0, kvh) + n0 * p.v.row_stride;
    std::int64_t const stat_row0 = std::int64_t{h} * g.rows_padded + q_row0;
    // The dQ tiles of this (batch, head) are dq_tile0 + i. Read once per item: a per-step read sat
    // right before the ticket wait, after the acquire loads had invalidated L1.
    int const dq_tile0 = p.tables.dq_tile_base[b] + h * ((len_q + TM - 1) / TM);

    auto load_q_step = [&](int i, Stage& st) {
      int const m0 = i * TM;
      int const valid = min(TM, len_q - m0);
      warp::load_tile_async<D, TM, kThreads>(st.q, q_ptr + m0 * p.q.row_stride, p.q.row_stride, valid);
      warp::load_tile_async<D, TM, kThreads>(st.dout, do_ptr + m0 * p.dout.row_stride, p.dout.row_stride,
                                                 valid);
      if (tid < 2 * TM) {
        // rows_padded leaves a tile of slack past total_q, so these reads stay in bounds.
        float const* src = (tid < TM ? p.lse_log2 : p.dpsum) + stat_row0 + m0 + (tid % TM);
        float* dst = (tid < TM ? st.lse : st.dpsum) + (tid % TM);
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(warp::smem_addr(dst)), "l"(src));
      }
      warp::cp_async_commit();
    };

    warp::cp_async_wait_all();  // an item without steps leaves its K/V copies unwaited
    __syncthreads();            // the previous item's last dQ GEMM read sm.k
    stamp_item(k, kItemStart);
    warp::load_tile_async<D, kTileN, kThreads>(sm.k, k_ptr, p.k.row_stride, min(kTileN, len_k - n0));
    warp::load_tile_async<D, kTileN, kThreads>(sm.v, v_ptr, p.v.row_stride, min(kTileN, len_k - n0));
    warp::cp_async_commit();
    // Q tiles run one step ahead of their use: step t prefetches tile i_next (known since step
    // t - 1) and asks for step t + 2's, so a table hook's load latency never holds up the prefetch.
    int i_cur = item.num_steps > 0 ? P::q_tile_at(p.tables, item, 0) : 0;
    int i_next = item.num_steps > 1 ? P::q_tile_at(p.tables, item, 1) : 0;
    if (item.num_steps > 0) load_q_step(i_cur, sm.stage[0]);

    // dV (role 0) or dK (role 1) of this warp's 32 KV rows over the whole head dimension.
    float acc[2][D / 8][4];
#pragma unroll
    for (int mb = 0; mb < 2; ++mb) {
#pragma unroll
      for (int nb = 0; nb < D / 8; ++nb) {
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mb][nb][e] = 0.f;
      }
    }

    for (int t = 0; t < item.num_steps; ++t) {
      int const i = i_cur;
      int const m0 = i * TM;
      // Asked for at the top of the step, used only at its end: a rank read from a table (the
      // generic kernel's, or a generated kernel's compact one with a dependent second load) then
      // has the whole step to arrive instead of stalling right before the ticket wait.
      int const rank = p.deterministic ? P::dq_rank(p.tables, item, t, i) : 0;
      Stage const& st = sm.stage[t & 1];
      std::uint32_t const stage_off = (t & 1) * kStageBytes;
      stamp_step(kStepEntry);
      warp::cp_async_wait_all();
      __syncthreads();  // stage t % 2 landed; every warp is past step t - 1 (stage (t + 1) % 2, sm.pt, sm.ds, sm.dq free)
      stamp_step(kStepLoaded);
      release_pending();
      if (t + 1 < item.num_steps) load_q_step(i_next, sm.stage[(t + 1) & 1]);
      int const i_after = t + 2 < item.num_steps ? P::q_tile_at(p.tables, item, t + 2) : 0;

      // S^T and dP^T: this warp's 32 KV rows x kWarpQ Q rows, as 2 m16 x kQn8 n8 blocks.
      float s[2][kQn8][4];
      float dp[2][kQn8][4];
#pragma unroll
      for (int mb = 0; mb < 2; ++mb) {
#pragma unroll
        for (int nb = 0; nb < kQn8; ++nb) {
#pragma unroll
          for (int e = 0; e < 4; ++e) s[mb][nb][e] = dp[mb][nb][e] = 0.f;
        }
      }
      std::uint32_t const qs_p2 = q_p2 + stage_off;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        std::uint32_t ak[2][4];
        std::uint32_t av[2][4];
#pragma unroll
        for (int mb = 0; mb < 2; ++mb) {
          warp::ldmatrix_x4(ak[mb], warp::swz_frag<D>(k_p1, wkv * 32 + mb * 16, 2 * kk));
          warp::ldmatrix_x4(av[mb], warp::swz_frag<D>(v_p1, wkv * 32 + mb * 16, 2 * kk));
        }
#pragma unroll
        for (int np = 0; np < kQn8 / 2; ++np) {
          std::uint32_t bq[4];
          std::uint32_t bo[4];
          std::uint32_t const at = warp::swz_frag<D>(qs_p2, wq * kWarpQ + np * 16, 2 * kk);
          warp::ldmatrix_x4(bq, at);
          warp::ldmatrix_x4(bo, at + kDoutOff);
#pragma unroll
          for (int mb = 0; mb < 2; ++mb) {
            warp::mma<DT>(s[mb][2 * np], ak[mb], bq[0], bq[1]);
            warp::mma<DT>(s[mb][2 * np + 1], ak[mb], bq[2], bq[3]);
            warp::mma<DT>(dp[mb][2 * np], av[mb], bo[0], bo[1]);
            warp::mma<DT>(dp[mb][2 * np + 1], av[mb], bo[2], bo[3]);
          }
        }
      }

      // P^T and dS^T into shared memory (bf16/fp16). Tiles that the mask and the lengths leave
      // whole take the branch-free path.
      // This warp's own half of P^T (role 0) or dS^T (role 1) stays in registers as the A
      // fragments of its dV / dK GEMM: an m16n8 accumulator pair is an m16k16 A fragment.
      std::uint32_t own[2][kQn8 / 2][4];
      bool const whole = mask_kind == kMaskFull
                             ? (m0 + TM <= len_q && n0 + kTileN <= len_k)
                             : (visible(g, mask_kind, m0 + TM - 1, n0, len_q, len_k) &&
                                visible(g, mask_kind, m0, n0 + kTileN - 1, len_q, len_k));
      auto softmax_grad = [&](auto masked) {
#pragma unroll
        for (int nb = 0; nb < kQn8; ++nb) {
          int const qc = wq * kWarpQ + nb * 8 + 2 * t4;
          int const chunk = wq * kQn8 + nb;
          float2 const lse = *reinterpret_cast<float2 const*>(st.lse + qc);
          float2 const dps = *reinterpret_cast<float2 const*>(st.dpsum + qc);
#pragma unroll
          for (int mb = 0; mb < 2; ++mb) {
            float pv[4];
            float dsv[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              float x = s[mb][nb][e] * g.scale_log2 - ((e & 1) ? lse.y : lse.x);
              if constexpr (decltype(masked)::value) {
                int const m = qc + (e & 1);
                int const n = wkv * 32 + mb * 16 + gq + (e >> 1) * 8;
                if (!visible(g, mask_kind, m0 + m, n0 + n, len_q, len_k)) x = -INFINITY;
              }
              float const pe = warp::ex2(x);
              pv[e] = pe;
              dsv[e] = pe * (dp[mb][nb][e] - ((e & 1) ? dps.y : dps.x));
            }
            std::uint32_t const p01 = E::pack(pv[0], pv[1]);
            std::uint32_t const p23 = E::pack(pv[2], pv[3]);
            std::uint32_t const ds01 = E::pack(dsv[0], dsv[1]);
            std::uint32_t const ds23 = E::pack(dsv[2], dsv[3]);
            own[mb][nb / 2][2 * (nb & 1)] = role == 0 ? p01 : ds01;
            own[mb][nb / 2][2 * (nb & 1) + 1] = role == 0 ? p23 : ds23;
            std::uint32_t const at =
                (pt_st ^ static_cast<std::uint32_t>((chunk & 7) * 16)) + (chunk & ~7) * 16 + mb * 16 * TM * 2;
            if (role == 1) {  // the role-0 warp of these KV rows reads this half of P^T
              *reinterpret_cast<std::uint32_t*>(smem_raw + at) = p01;
              *reinterpret_cast<std::uint32_t*>(smem_raw + at + 8 * TM * 2) = p23;
            }
            *reinterpret_cast<std::uint32_t*>(smem_raw + at + kPtToDs) = ds01;
            *reinterpret_cast<std::uint32_t*>(smem_raw + at + kPtToDs + 8 * TM * 2) = ds23;
          }
        }
      };
      if (whole) {
        softmax_grad(std::false_type{});
      } else {
        softmax_grad(std::true_type{});
      }
      __syncthreads();  // P^T and dS^T complete

      // Role 0: dV += P^T dO; role 1: dK += dS^T Q, over this warp's 32 KV rows and all D columns
      // (B fragments [k = Q row][n = d], transposed loads). The A fragments of the warp's own Q
      // half are in registers; those of the other half come from the other role's warp.
      auto dkv_block = [&](std::uint32_t const (&a)[2][4], int q_row) {
#pragma unroll
        for (int np = 0; np < D / 16; ++np) {
          std::uint32_t b[4];
          warp::ldmatrix_x4_trans(b, warp::swz_frag<D>(b_p1 + stage_off, q_row, 2 * np));
#pragma unroll
          for (int mb = 0; mb < 2; ++mb) {
            warp::mma<DT>(acc[mb][2 * np], a[mb], b[0], b[1]);
            warp::mma<DT>(acc[mb][2 * np + 1], a[mb], b[2], b[3]);
          }
        }
      };
#pragma unroll
      for (int u = 0; u < TM / 32; ++u) {
        std::uint32_t const a[2][4] = {{own[0][u][0], own[0][u][1], own[0][u][2], own[0][u][3]},
                                       {own[1][u][0], own[1][u][1], own[1][u][2], own[1][u][3]}};
        dkv_block(a, own_q + 16 * u);
      }
#pragma unroll
      for (int u = 0; u < TM / 32; ++u) {
        std::uint32_t a[2][4];
#pragma unroll
        for (int mb = 0; mb < 2; ++mb) {
          warp::ldmatrix_x4(a[mb], warp::swz_frag<TM>(a_other, wkv * 32 + mb * 16, 2 * u));
        }
        dkv_block(a, other_q + 16 * u);
      }

      // The ticket read early, before the dQ GEMM instead of after it: in most steps the previous
      // rank has released by then, so the wait below does not spin (measured faster at both head
      // dims, docs/results/2026-11-29-h200-runtime-layout.md, whether or not the acquire stalls
      // the warp until it returns).
      int const dq_tile = dq_tile0 + i;
      int const seen = p.deterministic && lane == 0 ? ticket::ld_acquire(p.dq_ticket + dq_tile) : -1;
      // dQ_i partial = dS K over this warp's kDqRows Q rows and kDqCols columns.
      float dq[kDqRows / 16][kDqCols / 8][4];
#pragma unroll
      for (int mb = 0; mb < kDqRows / 16; ++mb) {
#pragma unroll
        for (int nb = 0; nb < kDqCols / 8; ++nb) {
#pragma unroll
          for (int e = 0; e < 4; ++e) dq[mb][nb][e] = 0.f;
        }
      }
#pragma unroll
      for (int kk = 0; kk < kTileN / 16; ++kk) {
        std::uint32_t a[kDqRows / 16][4];
#pragma unroll
        for (int mb = 0; mb < kDqRows / 16; ++mb) {
          warp::ldmatrix_x4_trans(a[mb], warp::swz_frag<TM>(ds_dq, kk * 16, 2 * mb));
        }
#pragma unroll
        for (int np = 0; np < kDqCols / 16; ++np) {
          std::uint32_t bk[4];
          warp::ldmatrix_x4_trans(bk, warp::swz_frag<D>(k_p1, kk * 16, d0 / 8 + 2 * np));
#pragma unroll
          for (int mb = 0; mb < kDqRows / 16; ++mb) {
            warp::mma<DT>(dq[mb][2 * np], a[mb], bk[0], bk[1]);
            warp::mma<DT>(dq[mb][2 * np + 1], a[mb], bk[2], bk[3]);
          }
        }
      }

      // The partial goes through this warp's slice of sm.dq (no other warp touches it, so no CTA
      // barrier), rows of kDqCols floats, so that the adds are 16-byte vector reductions over whole
      // row segments: half the reduction instructions of adding the fragments where they are. The
      // 8 chunks of 16 bytes of row r are permuted by XOR with 2 (r mod 4): the 8-byte stores of a
      // half-warp (4 rows x 2 chunks of a pair) land in 8 distinct chunks, 32 distinct banks (XOR
      // with r mod 8 left them 2-way conflicted); the 16-byte reads take one row per quarter-warp,
      // conflict-free either way. The previous step's reads of the slice are behind this step's
      // top barrier already; the __syncwarp below keeps the slice's reuse correct within the warp
      // on its own.
      constexpr int kRowBytes = kDqCols * 4;
      static_assert(kRowBytes == 128 && kWarps * kDqRows * kRowBytes == sizeof(sm.dq),
                    "8 chunks per staged row; a slice per warp");
      __syncwarp();  // every lane's reads of the previous step's partial are done
      unsigned char* slice = reinterpret_cast<unsigned char*>(sm.dq) + wid * kDqRows * kRowBytes;
#pragma unroll
      for (int mb = 0; mb < kDqRows / 16; ++mb) {
#pragma unroll
        for (int nb = 0; nb < kDqCols / 8; ++nb) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            int const r = mb * 16 + gq + half * 8;
            int const chunk = (2 * nb + (t4 >> 1)) ^ ((r & 3) << 1);
            *reinterpret_cast<float2*>(slice + r * kRowBytes + chunk * 16 + (t4 & 1) * 8) =
                make_float2(dq[mb][nb][half * 2], dq[mb][nb][half * 2 + 1]);
          }
        }
      }
      __syncwarp();
      stamp_step(kStepStaging);
      stamp_step(kStepStaged);
      stamp_step(kStepTaken);
      if (p.deterministic) wait_turn<true>(p.dq_ticket + dq_tile, rank, dq_tile, p.watchdog, seen);
      stamp_step(kStepAcquired);
      // The first contribution in rank order stores (the preprocess did not zero dq_accum then).
      bool const store = p.dq_first_stores != 0 && rank == 0;
#pragma unroll
      for (int pass = 0; pass < kDqRows / 4; ++pass) {
        int const r = pass * 4 + lane / 8;
        int const c = lane % 8;
        int const row = m0 + mq0 + r;
        float4 const v = *reinterpret_cast<float4 const*>(slice + r * kRowBytes + ((c ^ ((r & 3) << 1)) * 16));
        if (row < len_q) {
          float* const at = p.dq_accum + (std::int64_t{q_row0 + row} * g.q_heads + h) * D + d0 + c * 4;
          if (store) {
            *reinterpret_cast<float4*>(at) = v;
          } else {
            red_add4(at, v);
          }
        }
      }
      if (p.deterministic) {
        pending_ticket = p.dq_ticket + dq_tile;
        pending_value = rank + 1;
      }
      stamp_step(kStepDone);
      ++n;
      i_cur = i_next;
      i_next = i_after;
    }
    if (pending_ticket != nullptr) {  // the item's last step: a barrier of its own (CTA-uniform branch)
      __syncthreads();
      release_pending();
    }

    // dV (role 0) or dK times the softmax scale (role 1) of this warp's 32 KV rows.
    if (role == 1) {
#pragma unroll
      for (int mb = 0; mb < 2; ++mb) {
#pragma unroll
        for (int nb = 0; nb < D / 8; ++nb) {
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mb][nb][e] *= g.scale;
        }
      }
    }
    if (!gqa) {
      TensorRef const& out = role == 0 ? p.dv : p.dk;
      T* out_ptr = static_cast<T*>(out.data) + sequence_offset(g, out, b, k_row0, kvh);
#pragma unroll
      for (int mb = 0; mb < 2; ++mb) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          int const row = n0 + wkv * 32 + mb * 16 + gq + half * 8;
          if (row < len_k) {
#pragma unroll
            for (int nb = 0; nb < D / 8; ++nb) {
              *reinterpret_cast<std::uint32_t*>(out_ptr + row * out.row_stride + nb * 8 + 2 * t4) =
                  E::pack(acc[mb][nb][half * 2], acc[mb][nb][half * 2 + 1]);
            }
          }
        }
      }
    } else {
      // GQA: the q heads of a group add into one fp32 dK/dV tile, in the schedule's fixed order.
      int const kv_tiles_b = (len_k + kTileN - 1) / kTileN;
      int const dkv_tile = p.tables.dkv_tile_base[b] + kvh * kv_tiles_b + j;
      int const rank = p.deterministic ? P::dkv_rank(p.tables, item) : 0;
      if (p.deterministic) wait_turn<false>(p.dkv_ticket + dkv_tile, rank, -1 - dkv_tile, p.watchdog);
      float* accum = role == 0 ? p.dv_accum : p.dk_accum;
#pragma unroll
      for (int mb = 0; mb < 2; ++mb) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          int const row = n0 + wkv * 32 + mb * 16 + gq + half * 8;
          if (row < len_k) {
            std::int64_t const at = (std::int64_t{k_row0 + row} * g.kv_heads + kvh) * D + 2 * t4;
#pragma unroll
            for (int nb = 0; nb < D / 8; ++nb) {
              red_add2(accum + at + nb * 8, acc[mb][nb][half * 2], acc[mb][nb][half * 2 + 1]);
            }
          }
        }
      }
      if (p.deterministic) release_turn(p.dkv_ticket + dkv_tile, rank + 1);
    }
    stamp_item(k, kItemEnd);
  }
  if constexpr (kKernelTraces) {
    if (tid == 0) trace::mark(p.trace, true);
  }
}

// ---- Host side: launch and registration --------------------------------------------------------
template <int D, int DT, BwdSchedule P>
void launch(BwdParams const& params, int grid, cudaStream_t stream) {
  constexpr int kSmem = static_cast<int>(sizeof(SharedStorage<D, DT, kTileMOf<P, D>>));
  opt_in_dynamic_smem(reinterpret_cast<void const*>(&bwd_main_kernel<D, DT, P>), kSmem);
  bwd_main_kernel<D, DT, P><<<grid, kThreads, kSmem, stream>>>(params);
  DASH_CUDA_CHECK_LAUNCH();
}

/// Resident CTAs per SM; 0 where a CTA's shared memory exceeds the device's per-block limit.
template <int D, int DT, BwdSchedule P>
int ctas_per_sm() {
  constexpr int kSmem = static_cast<int>(sizeof(SharedStorage<D, DT, kTileMOf<P, D>>));
  int device = 0;
  DASH_CUDA_CHECK(cudaGetDevice(&device));
  int limit = 0;
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (kSmem > limit) return 0;
  opt_in_dynamic_smem(reinterpret_cast<void const*>(&bwd_main_kernel<D, DT, P>), kSmem);
  int blocks = 0;
  DASH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, bwd_main_kernel<D, DT, P>,
                                                                kThreads, kSmem));
  return blocks;
}

template <BwdSchedule P, int D, int DT>
void register_variant() {
  KernelKey key{D, kTileMOf<P, D>, kTileN, P::kMaskKind, static_cast<DType>(DT), P::kScheduleHash};
  key.family = KernelFamily::kSm80;
  register_bwd_kernel(key, &launch<D, DT, P>, &ctas_per_sm<D, DT, P>,
                      P::kScheduleHash == 0 ? "generic-mma-sync" : "generated-mma-sync");
}

template <BwdSchedule P, int D>
void register_dtypes() {
  if constexpr (P::kDType <= 0) register_variant<P, D, 0>();
  if constexpr (P::kDType != 0) register_variant<P, D, 1>();
}

/// Registers the kernel with policy P under P's key for every head dim and dtype P leaves open:
/// one static instance per policy (runtime/kernels/sm80/generic.cu, each generated/*.cu).
template <BwdSchedule P>
struct Registrar {
  Registrar() {
    if constexpr (P::kHeadDim == 0 || P::kHeadDim == 64) register_dtypes<P, 64>();
    if constexpr (P::kHeadDim == 0 || P::kHeadDim == 128) register_dtypes<P, 128>();
  }
};

}  // namespace dash::rt::sm80

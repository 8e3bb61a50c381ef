#pragma once
// Backward main kernel, Hopper family (sm_90a): TMA loads into an mbarrier pipeline, wgmma, a
// dQ-writer warp that adds each step's dQ partial with TMA bulk reduce-adds, in rank order through
// the tile's ticket in deterministic mode (docs/design.md, "Hopper family").
//
// One CTA of 384 threads = 3 warpgroups, one CTA per SM, persistent over the schedule's items:
//   warpgroup 0, warp 0 (one lane): the producer. It walks the schedule through the policy's hooks
//     (the only role that does), loads K and V once per work item and Q, dO, LSE and dPsum per step
//     by TMA into a two-stage ring, and hands (item, Q tile, rank) to the other roles through
//     shared memory next to the data, so no schedule state lives in the MMA warpgroups' registers.
//   warpgroup 0, warp 1 (one lane): the dQ writer. Per step it takes a dQ partial from one of two
//     shared-memory buffers and adds it to the tile-major fp32 accumulator (TileMajorDq) with one
//     32 KB bulk reduce-add;
//     deterministic mode waits for the tile's ticket first (acquire), waits until the adds have
//     completed in global memory, then releases rank + 1. The first contribution to a tile stores
//     instead (no zeroing pass): rank 0's, or without tickets the first to claim the tile.
//   warpgroups 1 and 2: the MMA warpgroups, 64 KV rows each. Per step (transposed, so that dK and
//     dV stay in registers for the whole item):
//       S^T = K Q^T, dP^T = V dO^T                       (wgmma, both operands in shared memory)
//       P^T = exp2(S^T scale_log2 - LSE), dS^T = P^T o (dP^T - dPsum)        (registers)
//       dV += P^T dO, dK += dS^T Q                       (wgmma, A from registers)
//       dS^T -> shared memory; dQ_i = dS K              (wgmma, both operands transposed)
//     At head_dim 128 (Q tile 64 rows) each warpgroup computes half of dQ's columns, at 64 (Q tile
//     128 rows) half of its rows. At the item's end dK and dV go out by TMA, staged in the Q / dO
//     stages, which every step of the item is done with by then.
// Registers: 24 per producer thread, 240 per MMA thread (setmaxnreg; 128 x 24 + 256 x 240 fits the
// 64K register file).
#include <cstdint>

#include "runtime/cuda_check.h"
#include "runtime/kernel_params.h"
#include "runtime/kernel_trace.cuh"
#include "runtime/kernels/family.h"
#include "runtime/kernels/sm90/mbarrier.cuh"
#include "runtime/kernels/sm90/stmatrix.cuh"
#include "runtime/kernels/sm90/tensor_maps.h"
#include "runtime/kernels/sm90/tma.cuh"
#include "runtime/kernels/sm90/warpgroup.cuh"
#include "runtime/kernels/sm90/wgmma.cuh"
#include "runtime/mask.cuh"
#include "runtime/registry.h"
#include "runtime/schedule/protocol.cuh"
#include "runtime/smem_opt_in.h"
#include "runtime/tensor_offset.cuh"
#include "runtime/ticket.cuh"
#include "runtime/warp_mma.cuh"

namespace dash::rt::sm90 {

inline constexpr int kThreads = 384;
// The step order per head dim (kDeferRelease, Tiles::kDsFirst) is what measured
// fastest on the H200 (docs/results/2026-12-02-h200-sm90-step-order.md); an A/B build changes the
// constant (scripts/variant.sh).
/// Deferred release of a Q stage (compute()): at head dim 128 with 64-row Q tiles only; at 64 the
/// longer-lived registers make ptxas serialize the wgmma instructions; with 80-row tiles the step
/// ran 15-20% slower with it than without (H100, docs/results/2026-12-06-h100-tile80-first.md).
template <int D, int TM>
inline constexpr bool kDeferRelease = D == 128 && TM % 64 == 0;
inline constexpr int kProducerRegs = 24;
inline constexpr int kMmaRegs = 240;
// setmaxnreg moves registers within the CTA's pool: 384 threads times the launch bound's 168 per
// thread (65536 / 384 rounded down to 8), not the whole register file. Asking for more than the
// producer gave back would block every CTA in setmaxnreg.inc.
static_assert(128 * kProducerRegs + 256 * kMmaRegs <= kThreads * (65536 / kThreads / 8 * 8),
              "the CTA's register pool");

/// The family's compile-time tile configuration at head dim D and TM Q rows per step (the family's
/// tile by default; an 80-row tile at head dim 128 is being built, docs/design.md).
template <int D, int TM = family_tile_m(KernelFamily::kSm90, D)>
struct Tiles {
  static constexpr int kTM = TM;  ///< Q rows per step
  static constexpr int kTN = family_tile_n(KernelFamily::kSm90);     ///< KV rows per item
  /// A Q tile that is not a multiple of 64 rows (80 at head dim 128) is no wgmma M: each
  /// warpgroup then computes dQ^T = K^T dS^T (M = its 64 head-dim columns, N = the tile's rows)
  /// from dS stored KV-contiguous, into the transposed tile-major layout (tile_major_offset_t).
  static constexpr bool kDqT = kTM % 64 != 0;
  /// One dQ buffer where two do not fit the opt-in shared memory (80 rows: 40 KB each).
  static constexpr int kDqBuffers = kDqT ? 1 : family_traits(KernelFamily::kSm90).dq_buffers;
  static constexpr int kStages = 2;  ///< Q / dO / LSE / dPsum ring
  /// Copies of the step in the compute loop: one per Q / dO stage at 80 rows, each with its stage
  /// a constant. With the stage in a register, ptxas built the 80-row step's sixteen S^T / dP^T
  /// operand descriptors in vector registers and moved each to a uniform one before its wgmma
  /// (79 R2UR per step; docs/design.md, "Hopper family"). The 64- and 128-row tiles keep one copy
  /// with the stage in a register: their code is the same as without the copies (cubins compared).
  static constexpr int kStageCopies = kTM % 64 != 0 ? kStages : 1;
  // One K/V buffer: the next item's V loads once the item's last dP^T GEMM has completed, its K
  // once the last dQ GEMM has, and dK, dV are staged for their TMA store in the Q / dO stages. (A second K/V buffer at head dim 64
  // measured -1 to -3% at d64 full 4k and causal 8k, docs/results/2026-12-02-h200-sm90-smem-align.md;
  // the shared memory now holds a second dS^T buffer there instead.)
  /// dS^T buffers: with two, a warpgroup may store step t's dS^T while the other still runs step
  /// t - 1's dQ GEMM (it completed that GEMM before it arrived on step t's kBarDsFull, so step
  /// t + 1 may overwrite the buffer); one buffer needed a barrier before each store. Measured on
  /// the H200 at head dim 64 (docs/results/2026-12-03-h200-sm90-ds-stages.md): +2.5-3.7% over
  /// one buffer, det and atomic. At head dim 64 the storage then fills the opt-in limit.
  static constexpr int kDsStages = 2;
  /// dS^T stored before the dV GEMM is issued (head dim 64, and 80-row tiles: fewer spills, 40 / 80
  /// B against 64 / 120, docs/results/2026-12-06-h100-tile80-first.md), else after.
  static constexpr bool kDsFirst = D == 64 || kDqT;
  /// dK and dV go out staged in one Q / dO stage, the item's last step's, where one stage holds
  /// both (head dim 64): the producer then loads the next item's first step into the other stage
  /// while the epilogue runs. Else they fill both stages and the next item's loads wait for the
  /// store to have read them. Measured on the H200 at head dim 64 (docs/results/
  /// 2026-12-04-h200-sm90-item-boundary.md): deterministic 0.997-1.022 of the two-stage epilogue,
  /// atomic 0.991-1.004: a small gain, mostly within the spread.
  static constexpr bool kOneStageEpilogue = kTM >= kTN;
  /// dQ between the two MMA warpgroups: by rows where the Q tile has two 64-row halves, else by
  /// columns. Either way a warpgroup's share is one 64 x kDqN wgmma tile.
  static constexpr bool kDqByRows = kTM == 128;
  static constexpr int kDqN = kDqByRows ? D : D / 2;
  /// Floats of one dQ partial: staged and added as one tile-major chunk (TileMajorDq).
  static constexpr int kDqFloats = kTM * D;
  /// LSE and dPsum arrive by TMA from [q_head][rows_padded]: a box must start on a 16-byte
  /// boundary, so it starts at the Q tile's first row rounded down to 4 and holds 4 rows more;
  /// the step's shift (0..3) says where the tile begins. Stage arrays keep 128-byte alignment.
  static constexpr int kStatBox = kTM + 4;
  /// A multiple of 32 floats, so that every stage's array starts 128-byte aligned (kTM + 32 would
  /// not be at 80 rows); the same as kTM + 32 at 64 and 128.
  static constexpr int kStatStride = (kTM + 4 + 31) / 32 * 32;
  static_assert(kTN == 128 && (D == 64 || D == 128), "two warpgroups of 64 KV rows");
  static_assert(kTM == 64 || kTM == 128 || (kTM == 80 && D == 128), "Q tiles of 64, 128, or 80 rows at head dim 128");
  static_assert(kDqN == 64, "one m64n64 dQ tile per warpgroup");
  static_assert(kStageCopies == 1 || (kStageCopies == kStages && kStages % kDsStages == 0 &&
                                      kStages % kDqBuffers == 0),
                "copy u of the step runs the steps of stage u: their dS^T and dQ buffers are u % their counts");
};

struct ItemInfo {
  int batch;  ///< < 0: no more items
  int head;
  int kv_tile;
  int num_steps;
  int dkv_rank;
};
struct StepInfo {
  int q_tile;
  int rank;
  int stat_shift;  ///< the Q tile's first row in sm.lse / sm.dpsum
};
struct DqInfo {
  int tile;  ///< the dQ tile (its ticket and its accumulator chunk); < 0: the MMA warpgroups are done
  int rank;
};

/// Shared memory. Every operand tile is 128-byte swizzled in 64-column blocks, each block on a
/// 1024-byte boundary (every size below is a multiple of 1024 bytes).
template <int D, int TM = family_tile_m(KernelFamily::kSm90, D)>
struct SharedStorage {
  using C = Tiles<D, TM>;
  std::uint16_t k[C::kTN * D];  ///< [D / 64][kTN][64]
  std::uint16_t v[C::kTN * D];
  std::uint16_t q[C::kStages][C::kTM * D];  ///< [D / 64][kTM][64]
  std::uint16_t dout[C::kStages][C::kTM * D];
  /// dS^T [kTM / 64][kTN][64]: the dQ GEMM's A, M-major; with kDqT dS [kTN / 64][kTM][64], the
  /// transposed dQ GEMM's B, K-major.
  std::uint16_t ds[C::kDsStages][C::kTN * C::kTM];
  float dq[C::kDqBuffers][C::kDqFloats];  ///< tile-major (TileMajorDq)
  float lse[C::kStages][C::kStatStride];
  float dpsum[C::kStages][C::kStatStride];
  /// K and V each have their own pair: V is free once the item's last dP^T GEMM is done, K once its
  /// last dQ GEMM is, and the producer loads the next item's V, then K, as soon as each is.
  std::uint64_t k_full, k_empty, v_full, v_empty;
  std::uint64_t q_full[C::kStages], q_empty[C::kStages];
  std::uint64_t dq_full[C::kDqBuffers], dq_empty[C::kDqBuffers];
  /// The item's epilogue no longer needs the Q / dO stages (it stages dK, dV there for the TMA
  /// store): one arrival per item, the producer waits for it before the next item's Q loads into
  /// the stages it used (both, or with kOneStageEpilogue the last step's).
  std::uint64_t stages_free;
  ItemInfo item;
  StepInfo step[C::kStages];
  DqInfo dq_info[C::kDqBuffers];
};

__device__ __forceinline__ std::uint32_t smem_u32(void const* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// Arrivals on the barriers the MMA warpgroups release: every one of their threads.
inline constexpr int kMmaThreads = 256;
/// Named barriers of the MMA warpgroups (0 is __syncthreads').
inline constexpr int kBarDsFull = 2;  ///< both stored their dS^T rows
inline constexpr int kBarDkv = 3;     ///< GQA dK/dV ticket
inline constexpr int kBarEpilogue = 4;  ///< both staged their dK, dV rows for the TMA store
inline constexpr int kBarItemDone = 5;  ///< both finished every GEMM of the item (the stages are free)

// ---- Producer -----------------------------------------------------------------------------------
template <class Policy, int D, int TM>
__device__ void produce(BwdParams const& p, TensorMaps const& maps, SharedStorage<D, TM>& sm) {
  using C = Tiles<D, TM>;
  Geometry const& g = p.g;
  int const group = g.q_heads / g.kv_heads;
  prefetch_tensor_map(&maps.q);
  prefetch_tensor_map(&maps.k);
  prefetch_tensor_map(&maps.v);
  prefetch_tensor_map(&maps.dout);
  prefetch_tensor_map(&maps.lse);
  prefetch_tensor_map(&maps.dpsum);
  constexpr std::uint32_t kTileBytes = std::uint32_t{C::kTN} * D * 2;  ///< K or V
  constexpr std::uint32_t kStepBytes = 2u * C::kTM * D * 2 + 2u * C::kStatBox * 4;
  int step = 0;
  for (int k = 0;; ++k) {
    WorkItemRef const item = Policy::next_work_item(p.tables, static_cast<int>(blockIdx.x), k);
    std::uint32_t const k_full = smem_u32(&sm.k_full);
    std::uint32_t const v_full = smem_u32(&sm.v_full);
    // The MMA warpgroups are done with V (their last dP^T GEMM of the previous item).
    mbar_wait(smem_u32(&sm.v_empty), (k & 1) ^ 1);
    if (item.batch < 0) {
      mbar_wait(smem_u32(&sm.k_empty), (k & 1) ^ 1);
      sm.item.batch = -1;
      mbar_arrive(k_full);
      return;
    }
    int const b = item.batch;
    int const h = item.head;
    int const kvh = h / group;
    bool const gqa = group > 1;
    // Fixed-length batches: rows of one sequence, the batch a coordinate (rows past the sequence
    // are out of the box: zeros). Varlen: rows of the packed tensor, batch 0.
    int const bc = g.varlen ? 0 : b;
    int const k_row = (g.varlen ? g.cu_k[b] : 0) + item.kv_tile * C::kTN;
    int const q_base = g.varlen ? g.cu_q[b] : 0;
    int const stat_base = g.cu_q[b];
    mbar_arrive_expect_tx(v_full, kTileBytes);
#pragma unroll
    for (int blk = 0; blk < D / 64; ++blk) {
      tma_load_4d(smem_u32(sm.v + blk * C::kTN * 64), &maps.v, v_full, 64 * blk, k_row, kvh, bc);
    }
    // Done with K (their last dQ GEMM) and with the item's record, read when the item began.
    mbar_wait(smem_u32(&sm.k_empty), (k & 1) ^ 1);
    sm.item = ItemInfo{b, h, item.kv_tile, item.num_steps,
                       gqa && p.deterministic != 0 ? Policy::dkv_rank(p.tables, item) : 0};
    mbar_arrive_expect_tx(k_full, kTileBytes);
#pragma unroll
    for (int blk = 0; blk < D / 64; ++blk) {
      tma_load_4d(smem_u32(sm.k + blk * C::kTN * 64), &maps.k, k_full, 64 * blk, k_row, kvh, bc);
    }
    // The previous item's dK, dV sit in the Q / dO stages until its TMA store has read them: in
    // both stages (wait before any load), or in the previous item's last step's stage
    // (kOneStageEpilogue: wait before the first load into that stage, and at the latest before
    // this item's last load, so that the barrier's phases are waited for in order: the next
    // epilogue cannot start before this item's last step has been loaded).
    std::uint32_t const stages_free = smem_u32(&sm.stages_free);
    int staged = -1;  // the stage still holding the previous item's dK, dV; -1: none
    if (k > 0) {
      if constexpr (C::kOneStageEpilogue) {
        staged = (step + C::kStages - 1) % C::kStages;
      } else {
        mbar_wait(stages_free, (k - 1) & 1);
      }
    }
    for (int t = 0; t < item.num_steps; ++t, ++step) {
      int const s = step % C::kStages;
      // The schedule's lookups (global loads) before the wait for a free stage, so their latency
      // hides behind it.
      int const i = Policy::q_tile_at(p.tables, item, t);
      int const rank = p.deterministic != 0 ? Policy::dq_rank(p.tables, item, t, i) : 0;
      if (staged >= 0 && (s == staged || t == item.num_steps - 1)) {
        mbar_wait(stages_free, (k - 1) & 1);
        staged = -1;
      }
      mbar_wait(smem_u32(&sm.q_empty[s]), ((step / C::kStages) & 1) ^ 1);
      int const m0 = i * C::kTM;
      int const stat_row = stat_base + m0;
      sm.step[s] = StepInfo{i, rank, stat_row % 4};
      std::uint32_t const full = smem_u32(&sm.q_full[s]);
      mbar_arrive_expect_tx(full, kStepBytes);
#pragma unroll
      for (int blk = 0; blk < D / 64; ++blk) {
        tma_load_4d(smem_u32(sm.q[s] + blk * C::kTM * 64), &maps.q, full, 64 * blk, q_base + m0, h, bc);
        tma_load_4d(smem_u32(sm.dout[s] + blk * C::kTM * 64), &maps.dout, full, 64 * blk, q_base + m0, h, bc);
      }
      tma_load_2d(smem_u32(sm.lse[s]), &maps.lse, full, stat_row - stat_row % 4, h);
      tma_load_2d(smem_u32(sm.dpsum[s]), &maps.dpsum, full, stat_row - stat_row % 4, h);
    }
    if (staged >= 0) mbar_wait(stages_free, (k - 1) & 1);  // an item without steps
  }
}

// ---- dQ writer ----------------------------------------------------------------------------------
template <int D, int TM>
__device__ void write_dq(BwdParams const& p, SharedStorage<D, TM>& sm) {
  using C = Tiles<D, TM>;
  for (int n = 0;; ++n) {
    int const buf = n % C::kDqBuffers;
    mbar_wait(smem_u32(&sm.dq_full[buf]), (n / C::kDqBuffers) & 1);
    DqInfo const info = sm.dq_info[buf];
    if (info.tile < 0) break;
    bool const det = p.deterministic != 0;
    int* const tile_ticket = p.dq_ticket + info.tile;
    if constexpr (kKernelTraces) trace::step(p.trace, n, kStepTaken);
    // The first contribution stores where the preprocess did not zero dq_accum (dq_first_stores):
    // in rank order in deterministic mode; without tickets, the first to claim the tile (ticket 0
    // -> 1; it releases 2 once its store is complete), the others adding after that release.
    bool store = false;
    if (det) {
      ticket::spin_until(tile_ticket, info.rank, info.tile, p.watchdog);
      fence_proxy_async_global();  // the add below (async proxy) after the acquire
      store = p.dq_first_stores != 0 && info.rank == 0;
    } else if (p.dq_first_stores != 0) {
      int seen = ticket::ld_relaxed(tile_ticket);
      if (seen == 0) seen = atomicCAS(tile_ticket, 0, 1);
      store = seen == 0;
      if (!store) {
        ticket::spin_until(tile_ticket, 2, info.tile, p.watchdog);
        fence_proxy_async_global();
      }
    }
    if constexpr (kKernelTraces) trace::step(p.trace, n, kStepAcquired);
    // One bulk operation for the whole tile.
    float* dst = p.dq_accum + std::int64_t{info.tile} * C::kDqFloats;
    std::uint32_t const src = smem_u32(sm.dq[buf]);
    if (store) {
      bulk_store(dst, src, C::kDqFloats * 4);
    } else {
      bulk_reduce_add_f32(dst, src, C::kDqFloats * 4);
    }
    bulk_commit();
    // The buffer may be refilled once the add has read it.
    bulk_wait_read();
    mbar_arrive(smem_u32(&sm.dq_empty[buf]));
    if (det || store) {
      // Complete in global memory, not merely read from shared memory, before the next rank (the
      // adders) may add: the completion orders the bulk writes before this thread's release.
      bulk_wait_complete();
      ticket::st_release(tile_ticket, det ? info.rank + 1 : 2);
    }
    if constexpr (kKernelTraces) trace::step(p.trace, n, kStepDone);
  }
  bulk_wait_complete();
  if constexpr (kKernelTraces) trace::mark(p.trace, true);
}

// ---- MMA warpgroups -----------------------------------------------------------------------------
/// K-major operand descriptor (128-byte swizzle): 8-row groups 1024 bytes apart.
__device__ __forceinline__ std::uint64_t k_major(std::uint32_t addr) { return smem_desc(addr, 16, 1024); }
/// MN-major operand descriptor: 8 rows of the reduction dimension 1024 bytes apart, 64-column
/// blocks of M / N `block_bytes` apart.
__device__ __forceinline__ std::uint64_t mn_major(std::uint32_t addr, std::uint32_t block_bytes) {
  return smem_desc(addr, block_bytes, 1024);
}

template <int DT, int N>
__device__ __forceinline__ void mma_ss(float (&d)[N / 2], std::uint64_t a, std::uint64_t b, int acc) {
  if constexpr (N == 64) {
    mma_ss_n64<DT, 0, 0>(d, a, b, acc);
  } else if constexpr (N == 80) {
    mma_ss_n80<DT, 0, 0>(d, a, b, acc);
  } else {
    mma_ss_n128<DT, 0, 0>(d, a, b, acc);
  }
}
template <int DT, int N>
__device__ __forceinline__ void mma_rs_t(float (&d)[N / 2], std::uint32_t const (&a)[4], std::uint64_t b) {
  if constexpr (N == 64) {
    mma_rs_n64<DT, 1>(d, a, b, 1);
  } else {
    mma_rs_n128<DT, 1>(d, a, b, 1);
  }
}

template <int N>
__device__ __forceinline__ void zero(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) d[i] = 0.f;
}

template <class Policy, int D, int DT, int TM_>
__device__ void compute(int wg, BwdParams const& p, TensorMaps const& maps, SharedStorage<D, TM_>& sm) {
  using C = Tiles<D, TM_>;
  constexpr bool kDefer = kDeferRelease<D, TM_>;
  using E = warp::Elem<DT>;
  using T = typename E::T;
  constexpr int TM = C::kTM;
  constexpr int TN = C::kTN;
  Geometry const& g = p.g;
  int const mask_kind = Policy::kMaskKind >= 0 ? Policy::kMaskKind : g.mask_kind;
  int const wtid = static_cast<int>(threadIdx.x) % 128;
  int const wq = wtid / 32;  // warp in the warpgroup: rows 16 wq.. of every m64 tile
  int const lane = wtid % 32;
  int const gq = lane / 4;
  int const t4 = lane % 4;
  int const group = g.q_heads / g.kv_heads;
  bool const gqa = group > 1;
  bool const mma_leader = static_cast<int>(threadIdx.x) == 128;
  // Kernel traces (DASH_KERNEL_TRACE builds): the leader stamps the warpgroups' steps and items.
  auto const stamp_step = [&](int n, int e) {
    if constexpr (kKernelTraces) {
      if (mma_leader) trace::step(p.trace, n, e);
    }
  };
  auto const stamp_item = [&](int k, int e) {
    if constexpr (kKernelTraces) {
      if (mma_leader) trace::item(p.trace, k, e);
    }
  };

  std::uint32_t const ds_s = smem_u32(sm.ds[0]);
  constexpr std::uint32_t kDsBytes = sizeof(sm.ds[0]);
  constexpr std::uint32_t kKvBlock = TN * 128;  // bytes of a 64-column block of K, V, dS^T
  constexpr std::uint32_t kQBlock = TM * 128;   // of Q, dO
  // dQ share of this warpgroup: rows q_off.., columns d_off..
  int const q_off = C::kDqByRows ? 64 * wg : 0;
  int const d_off = C::kDqByRows ? 0 : (D / 2) * wg;
  // dS^T as the dQ GEMM reads it (MN-major).
  [[maybe_unused]] std::uint64_t const ds_t_desc = mn_major(ds_s + (q_off / 64) * kKvBlock, kKvBlock);

  int step = 0;  // steps of this CTA so far: the Q ring's and the dQ buffers' position
  for (int k = 0;; ++k) {
    // The stage whose Q the previous step's dK GEMM may still read: released once this step's
    // S^T is done (wgmma groups complete in order), so that the next step's loads and S^T, dP^T
    // issue overlap that dK GEMM instead of waiting for it.
    int held = -1;
    stamp_item(k, kItemWait);
    mbar_wait(smem_u32(&sm.k_full), k & 1);
    ItemInfo const item = sm.item;
    if (item.batch < 0) break;
    // V too (loaded first; a wait between the step's wgmma issues would make ptxas serialize them).
    mbar_wait(smem_u32(&sm.v_full), k & 1);
    stamp_item(k, kItemStart);
    // The item's K and V: this warpgroup's rows (K-major) for S^T and dP^T, K as the dQ GEMM reads
    // it (MN-major).
    std::uint32_t const k_s = smem_u32(sm.k);
    std::uint32_t const v_s = smem_u32(sm.v);
    std::uint64_t const k_desc = k_major(k_s + wg * 64 * 128);
    std::uint64_t const v_desc = k_major(v_s + wg * 64 * 128);
    std::uint64_t const k_t_desc = mn_major(k_s + (d_off / 64) * kKvBlock, kKvBlock);
    int const b = item.batch;
    int const h = item.head;
    int const kvh = h / group;
    int const q_row0 = g.cu_q[b];
    int const k_row0 = g.cu_k[b];
    int const len_q = g.cu_q[b + 1] - q_row0;
    int const len_k = g.cu_k[b + 1] - k_row0;
    int const n0 = item.kv_tile * TN;
    int const dq_tile0 = p.tables.dq_tile_base[b] + h * ((len_q + TM - 1) / TM);

    float dv[D / 2];
    float dk[D / 2];
    zero(dv);
    zero(dk);
    // Every wgmma of the warpgroup done (the dK GEMM last), dV and dK pinned past the wait.
    auto const finish_gemms = [&] {
      wait<0>();
      fence_operand(dv);
      fence_operand(dk);
    };
    // Copy u of the step (Tiles::kStageCopies > 1) runs the steps whose stage is u: an outer
    // iteration runs one or two steps, in order.
    for (int t = 0; t < item.num_steps;) {
#pragma unroll
      for (int u = 0; u < C::kStageCopies; ++u) {
        if (C::kStageCopies > 1 && (t == item.num_steps || step % C::kStages != u)) continue;
        // The step's position in the stage / buffer rings: its copy where there are copies.
        int const ring = C::kStageCopies > 1 ? u : step;
        int const s = ring % C::kStages;
        stamp_step(step, kStepEntry);
        mbar_wait(smem_u32(&sm.q_full[s]), (step / C::kStages) & 1);
        stamp_step(step, kStepLoaded);
        StepInfo const si = sm.step[s];
        int const m0 = si.q_tile * TM;
        float const* lse_s = sm.lse[s] + si.stat_shift;
        float const* dpsum_s = sm.dpsum[s] + si.stat_shift;
        std::uint32_t const q_s = smem_u32(sm.q[s]);
        std::uint32_t const do_s = smem_u32(sm.dout[s]);

        // S^T and dP^T of this warpgroup's 64 KV rows: M = 64 (KV), N = TM (Q), K = D.
        float st[TM / 2];
        float dpt[TM / 2];
        // Descriptors: one per operand and step, the k-steps a constant further each.
        std::uint64_t const q_desc = k_major(q_s);
        std::uint64_t const do_desc = k_major(do_s);
        fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          std::uint32_t const kv_off = (kk / 4) * kKvBlock + (kk % 4) * 32;
          std::uint32_t const q_off_b = (kk / 4) * kQBlock + (kk % 4) * 32;
          mma_ss<DT, TM>(st, desc_advance(k_desc, kv_off), desc_advance(q_desc, q_off_b), kk > 0);
        }
        commit();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          std::uint32_t const kv_off = (kk / 4) * kKvBlock + (kk % 4) * 32;
          std::uint32_t const q_off_b = (kk / 4) * kQBlock + (kk % 4) * 32;
          mma_ss<DT, TM>(dpt, desc_advance(v_desc, kv_off), desc_advance(do_desc, q_off_b), kk > 0);
        }
        commit();

        // P^T = exp2(S^T scale_log2 - LSE) in place; element (j, e): KV row 16 wq + gq + 8 (e / 2)
        // of this warpgroup's 64, Q column 8 j + 2 t4 + e % 2.
        wait<1>();
        fence_operand(st);
        if (kDefer && held >= 0) mbar_arrive(smem_u32(&sm.q_empty[held]));
        bool const whole = mask_kind == kMaskFull
                               ? (m0 + TM <= len_q && n0 + TN <= len_k)
                               : (visible(g, mask_kind, m0 + TM - 1, n0, len_q, len_k) &&
                                  visible(g, mask_kind, m0, n0 + TN - 1, len_q, len_k));
        int const kv_base = n0 + 64 * wg + 16 * wq + gq;
        // Two straight-line loops, not a mask test per element: the exponentials then overlap the
        // dP^T GEMM still in flight (a branch per element let ptxas sink them past the wait).
        if (whole) {
#pragma unroll
          for (int j = 0; j < TM / 8; ++j) {
            int const col = 8 * j + 2 * t4;
            float const lse[2] = {lse_s[col], lse_s[col + 1]};
#pragma unroll
            for (int e = 0; e < 4; ++e) st[4 * j + e] = warp::ex2(st[4 * j + e] * g.scale_log2 - lse[e & 1]);
          }
        } else {
          // visible() per element, folded into four compares against per-thread bounds: element
          // (j, e) is query qa + 8 j + (e & 1), key kv_base + 8 (e >> 1), so its distance from the
          // band's diagonal is base + c with c = 8 (e >> 1) - 8 j - (e & 1), a constant.
          int const qa = m0 + 2 * t4;
          int const base = kv_base - qa - (len_k - len_q);
          Band const bd = band(g, mask_kind);
          int const lo = -bd.left - base;
          int const hi = bd.right - base;
          int const q_lim = len_q - qa;
          int const kv_lim = len_k - kv_base;
#pragma unroll
          for (int j = 0; j < TM / 8; ++j) {
            int const col = 8 * j + 2 * t4;
            float const lse[2] = {lse_s[col], lse_s[col + 1]};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              int const c = 8 * (e >> 1) - 8 * j - (e & 1);
              bool const seen = c >= lo && c <= hi && 8 * j + (e & 1) < q_lim && 8 * (e >> 1) < kv_lim;
              st[4 * j + e] = warp::ex2(seen ? st[4 * j + e] * g.scale_log2 - lse[e & 1] : -INFINITY);
            }
          }
        }
        fence_operand(st);
        wait<0>();
        fence_operand(dpt);
        bool const last_step = t == item.num_steps - 1;
        // V goes back to the producer once the item's last dP^T GEMM is done, K once its last dQ GEMM
        // is: the next item's loads overlap the rest of the step and the epilogue (measured on the
        // H200: 1.004-1.038 at head dim 64 causal, deterministic; within the spread elsewhere;
        // docs/results/2026-12-04-h200-sm90-item-boundary.md).
        if (last_step) mbar_arrive(smem_u32(&sm.v_empty));
        // dS^T = P^T o (dP^T - dPsum), and both as bf16/fp16 A fragments (k-block c = columns 16 c..).
        std::uint32_t pa[TM / 16][4];
        std::uint32_t dsa[TM / 16][4];
#pragma unroll
        for (int j = 0; j < TM / 8; ++j) {
          int const col = 8 * j + 2 * t4;
          float2 const dps = make_float2(dpsum_s[col], dpsum_s[col + 1]);
          float dsv[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) dsv[e] = st[4 * j + e] * (dpt[4 * j + e] - ((e & 1) ? dps.y : dps.x));
          pa[j / 2][2 * (j & 1)] = E::pack(st[4 * j], st[4 * j + 1]);
          pa[j / 2][2 * (j & 1) + 1] = E::pack(st[4 * j + 2], st[4 * j + 3]);
          dsa[j / 2][2 * (j & 1)] = E::pack(dsv[0], dsv[1]);
          dsa[j / 2][2 * (j & 1) + 1] = E::pack(dsv[2], dsv[3]);
        }

        // dV += P^T dO: M = 64 (KV), N = D, K = TM (Q); dO is [Q][D], N-major. And dS^T into
        // shared memory for the dQ GEMM (row = KV row of the tile, 128-byte swizzle): one stmatrix
        // per k-block c of the fragment, the warp's 16 KV rows times Q columns 16 c.. as four 8 x 8
        // matrices (rows + 0 / + 8, columns + 0 / + 8: dsa[c][0..3]). Lane l addresses row l % 8 of
        // matrix l / 8; its 16-byte chunk 2 (c % 4) + l / 16 of the 64-column block c / 4 sits at
        // that chunk XOR the row's (l % 8). kDsFirst: the store before the dV issue, so that the
        // other warpgroup's wait for it is shorter.
        std::uint64_t const do_t_desc = mn_major(do_s, kQBlock);
        int const ds_buf = ring % C::kDsStages;
        if constexpr (!C::kDsFirst) {
          fence();
#pragma unroll
          for (int c = 0; c < TM / 16; ++c) mma_rs_t<DT, D>(dv, pa[c], desc_advance(do_t_desc, c * 2048));
          commit();
        }
        if constexpr (C::kDqT) {
          // dS itself, KV-contiguous ([kTN / 64][TM][64]: the transposed dQ GEMM's B, K-major):
          // stmatrix .trans turns each 8 x 8 matrix of the fragment (KV rows x Q columns) into Q rows x
          // KV columns. Lane l addresses Q row 16 c + 8 (l / 16) + l % 8 of block wg (this warpgroup's
          // 64 KV columns); its 16-byte chunk 2 wq + (l / 8) % 2 sits at that chunk XOR (l % 8).
          int const mat = lane / 8;
          std::uint32_t const row_at = ds_s + ds_buf * kDsBytes + wg * (TM * 128) + (8 * (mat / 2) + lane % 8) * 128 +
                                       (((2 * wq + mat % 2) ^ (lane % 8)) * 16);
#pragma unroll
          for (int c = 0; c < TM / 16; ++c) stmatrix_x4_trans(row_at + c * 16 * 128, dsa[c]);
        } else {
          int const mat = lane / 8;
          std::uint32_t const row_at = ds_s + ds_buf * kDsBytes + (64 * wg + 16 * wq + lane % 8 + 8 * (mat % 2)) * 128;
          std::uint32_t const swz = (16 * (mat / 2)) ^ (16 * (lane % 8));
#pragma unroll
          for (int c = 0; c < TM / 16; ++c) stmatrix_x4(row_at + (c / 4) * kKvBlock + ((32 * (c % 4)) ^ swz), dsa[c]);
        }
        if constexpr (C::kDsFirst) {
          fence();
#pragma unroll
          for (int c = 0; c < TM / 16; ++c) mma_rs_t<DT, D>(dv, pa[c], desc_advance(do_t_desc, c * 2048));
          commit();
        }
        fence_proxy_async_shared();
        named_barrier(kBarDsFull, kMmaThreads);

        // dQ_i = dS K over this warpgroup's share: M = 64 (Q rows q_off..), N = 64 (columns d_off..),
        // K = TN (KV). A = dS^T, M-major; B = K [KV][D], N-major. Issued before dK, so that the
        // partial goes to shared memory while the dK GEMM runs.
        float dq[C::kDqT ? TM / 2 : 32];
        if constexpr (C::kDqT) {
          // dQ^T of this warpgroup's 64 head-dim columns: M = 64 (columns d_off..), N = TM (Q), K = TN
          // (KV). A = K^T, M-major (K's block of those columns); B = dS [Q][KV], K-major.
          std::uint64_t const ds_desc = k_major(ds_s + ds_buf * kDsBytes);
#pragma unroll
          for (int kk = 0; kk < TN / 16; ++kk) {
            mma_ss_n80<DT, 1, 0>(dq, desc_advance(k_t_desc, kk * 2048),
                                 desc_advance(ds_desc, (kk / 4) * (TM * 128) + (kk % 4) * 32), kk > 0);
          }
        } else {
#pragma unroll
          for (int kk = 0; kk < TN / 16; ++kk) {
            mma_ss_n64<DT, 1, 1>(dq, desc_advance(ds_t_desc, ds_buf * kDsBytes + kk * 2048),
                                 desc_advance(k_t_desc, kk * 2048), kk > 0);
          }
        }
        commit();

        // dK += dS^T Q: M = 64 (KV), N = D, K = TM (Q); Q is [Q][D], N-major.
        std::uint64_t const q_t_desc = mn_major(q_s, kQBlock);
#pragma unroll
        for (int c = 0; c < TM / 16; ++c) mma_rs_t<DT, D>(dk, dsa[c], desc_advance(q_t_desc, c * 2048));
        commit();

        // The partial to the writer through buffer step % kDqBuffers (dV and dQ done, dK running).
        wait<1>();
        fence_operand(dq);
        if (last_step) mbar_arrive(smem_u32(&sm.k_empty));
        int const buf = ring % C::kDqBuffers;
        stamp_step(step, kStepStaging);
        mbar_wait(smem_u32(&sm.dq_empty[buf]), ((step / C::kDqBuffers) & 1) ^ 1);
        // This warpgroup's share of the tile-major partial (TileMajorDq): column block j of the
        // accumulator is 128 threads x 4 floats.
        // With kDqT, the warpgroup's share of the transposed layout (tile_major_offset_t): TM * 64 floats,
        // register block j at 512 j.
        float4* stage = reinterpret_cast<float4*>(
                            sm.dq[buf] + (C::kDqT ? wg * TM * 64 : (q_off / 64) * (D / 64) * 4096 + (d_off / 64) * 4096)) +
                        wtid;
#pragma unroll
        for (int j = 0; j < (C::kDqT ? TM / 8 : 8); ++j) {
          stage[128 * j] = make_float4(dq[4 * j], dq[4 * j + 1], dq[4 * j + 2], dq[4 * j + 3]);
        }
        if (mma_leader) {
          sm.dq_info[buf] = DqInfo{dq_tile0 + si.q_tile, si.rank};
        }
        fence_proxy_async_shared();
        mbar_arrive(smem_u32(&sm.dq_full[buf]));
        stamp_step(step, kStepStaged);
        if (kDefer) {
          held = s;
        } else {
          finish_gemms();
          mbar_arrive(smem_u32(&sm.q_empty[s]));  // this thread is done with stage s
        }
        ++t;
        ++step;
      }
    }
    if (kDefer) {
      finish_gemms();
      if (held >= 0) mbar_arrive(smem_u32(&sm.q_empty[held]));
    }
    // An item without steps (GQA keeps them) gives K and V back here.
    if (item.num_steps == 0) {
      mbar_arrive(smem_u32(&sm.v_empty));
      mbar_arrive(smem_u32(&sm.k_empty));
    }

    // dV, and dK times the softmax scale, of this warpgroup's 64 KV rows: element (j, e) is row
    // 16 wq + gq + 8 (e / 2), column 8 j + 2 t4 + e % 2.
#pragma unroll
    for (int x = 0; x < D / 2; ++x) dk[x] *= g.scale;
    int const row_base = n0 + 64 * wg + 16 * wq + gq;
    // Without GQA the tile goes out by TMA: staged in K's layout, one stmatrix per 16 columns as
    // for dS^T, then one store per 64-column block. The staging area is the Q / dO stages: free
    // once both warpgroups' wgmmas of the item have completed; stages_free lets the producer
    // refill them once the store has read them. The box clips rows past the tensor's end, so only a varlen tile
    // cut by its sequence's end (the next sequence's rows follow in the packed tensor) takes the
    // per-thread stores.
    bool const by_tma = !gqa && (!g.varlen || n0 + TN <= len_k);
    std::uint32_t const release = smem_u32(&sm.stages_free);
    // The other warpgroup's last GEMMs may still read the last step's Q, dO stage: both
    // warpgroups must be done before either overwrites the staging area.
    if (by_tma) {
      named_barrier(kBarItemDone, kMmaThreads);
      // kOneStageEpilogue: the stage of the item's last step (the producer's `staged`).
      int const last = C::kOneStageEpilogue ? (step + C::kStages - 1) % C::kStages : 0;
      std::uint32_t dk_s = smem_u32(sm.q[last]);
      std::uint32_t dv_s = smem_u32(sm.dout[last]);
      if constexpr (C::kStageCopies > 1) {
        // Opaque to the compiler's optimizer (an empty asm, no instruction): stage 0's addresses,
        // shared with the step's copy 0, kept that copy's descriptors in vector registers (the
        // R2UR the copies remove; 93 R2UR in the kernel without this, 37 with it, nvcc 13.0).
        asm("" : "+r"(dk_s));
        asm("" : "+r"(dv_s));
      }
      static_assert(sizeof(sm.q) >= TN * D * 2 && sizeof(sm.dout) >= TN * D * 2, "dK, dV fit the staging area");
      static_assert(!C::kOneStageEpilogue || (sizeof(sm.q[0]) >= TN * D * 2 && sizeof(sm.dout[0]) >= TN * D * 2),
                    "dK, dV fit one stage");
      int const mat = lane / 8;
      std::uint32_t const row_at = (64 * wg + 16 * wq + lane % 8 + 8 * (mat % 2)) * 128;
      std::uint32_t const swz = (16 * (mat / 2)) ^ (16 * (lane % 8));
#pragma unroll
      for (int c = 0; c < D / 16; ++c) {
        std::uint32_t const at = row_at + (c / 4) * kKvBlock + ((32 * (c % 4)) ^ swz);
        std::uint32_t const fk[4] = {E::pack(dk[8 * c], dk[8 * c + 1]), E::pack(dk[8 * c + 2], dk[8 * c + 3]),
                                     E::pack(dk[8 * c + 4], dk[8 * c + 5]), E::pack(dk[8 * c + 6], dk[8 * c + 7])};
        std::uint32_t const fv[4] = {E::pack(dv[8 * c], dv[8 * c + 1]), E::pack(dv[8 * c + 2], dv[8 * c + 3]),
                                     E::pack(dv[8 * c + 4], dv[8 * c + 5]), E::pack(dv[8 * c + 6], dv[8 * c + 7])};
        stmatrix_x4(dk_s + at, fk);
        stmatrix_x4(dv_s + at, fv);
      }
      fence_proxy_async_shared();
      named_barrier(kBarEpilogue, kMmaThreads);
      if (mma_leader) {
        int const bc = g.varlen ? 0 : b;
        int const k_row = (g.varlen ? k_row0 : 0) + n0;
#pragma unroll
        for (int blk = 0; blk < D / 64; ++blk) {
          tma_store_4d(&maps.dk, dk_s + blk * kKvBlock, 64 * blk, k_row, kvh, bc);
          tma_store_4d(&maps.dv, dv_s + blk * kKvBlock, 64 * blk, k_row, kvh, bc);
        }
        bulk_commit();
        bulk_wait_read();
      }
    }
    if (mma_leader) mbar_arrive(release);
    if (!by_tma && !gqa) {
      T* dv_ptr = static_cast<T*>(p.dv.data) + sequence_offset(g, p.dv, b, k_row0, kvh);
      T* dk_ptr = static_cast<T*>(p.dk.data) + sequence_offset(g, p.dk, b, k_row0, kvh);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        int const row = row_base + 8 * half;
        if (row < len_k) {
#pragma unroll
          for (int j = 0; j < D / 8; ++j) {
            int const col = 8 * j + 2 * t4;
            *reinterpret_cast<std::uint32_t*>(dv_ptr + row * p.dv.row_stride + col) =
                E::pack(dv[4 * j + 2 * half], dv[4 * j + 2 * half + 1]);
            *reinterpret_cast<std::uint32_t*>(dk_ptr + row * p.dk.row_stride + col) =
                E::pack(dk[4 * j + 2 * half], dk[4 * j + 2 * half + 1]);
          }
        }
      }
    } else if (gqa) {
      // GQA: the q heads of a group add into one fp32 dK/dV tile, in the schedule's fixed order.
      int const kv_tiles_b = (len_k + TN - 1) / TN;
      int const dkv_tile = p.tables.dkv_tile_base[b] + kvh * kv_tiles_b + item.kv_tile;
      bool const det = p.deterministic != 0;
      if (det && mma_leader) ticket::spin_until(p.dkv_ticket + dkv_tile, item.dkv_rank, -1 - dkv_tile, p.watchdog);
      if (det) named_barrier(kBarDkv, kMmaThreads);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        int const row = row_base + 8 * half;
        if (row < len_k) {
          std::int64_t const at = (std::int64_t{k_row0 + row} * g.kv_heads + kvh) * D + 2 * t4;
#pragma unroll
          for (int j = 0; j < D / 8; ++j) {
            asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p.dv_accum + at + 8 * j),
                         "f"(dv[4 * j + 2 * half]), "f"(dv[4 * j + 2 * half + 1])
                         : "memory");
            asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p.dk_accum + at + 8 * j),
                         "f"(dk[4 * j + 2 * half]), "f"(dk[4 * j + 2 * half + 1])
                         : "memory");
          }
        }
      }
      if (det) {
        // The barrier orders every thread's reds before the leader's release, which is cumulative.
        named_barrier(kBarDkv, kMmaThreads);
        if (mma_leader) ticket::st_release(p.dkv_ticket + dkv_tile, item.dkv_rank + 1);
      }
    }
    stamp_item(k, kItemEnd);
  }
  // No more items: tell the writer.
  int const buf = step % C::kDqBuffers;
  mbar_wait(smem_u32(&sm.dq_empty[buf]), ((step / C::kDqBuffers) & 1) ^ 1);
  if (mma_leader) sm.dq_info[buf].tile = -1;
  mbar_arrive(smem_u32(&sm.dq_full[buf]));
  if (mma_leader) bulk_wait_complete();  // the last item's dK, dV stores
}

// ---- The kernel ---------------------------------------------------------------------------------
/// The H100/H200 opt-in shared memory per block.
inline constexpr int kSmemLimit = 227 * 1024;
template <int D, int TM = family_tile_m(KernelFamily::kSm90, D)>
inline constexpr int kSmemSlack = kSmemLimit - static_cast<int>(sizeof(SharedStorage<D, TM>)) < 1024
                                      ? (kSmemLimit - static_cast<int>(sizeof(SharedStorage<D, TM>))) / 128 * 128
                                      : 1024;
static_assert(kSmemSlack<64> >= 0 && kSmemSlack<128> >= 0 && kSmemSlack<128, 80> >= 0,
              "the storage fits the opt-in shared memory");
template <class Policy, int D, int DT, int TM>
__global__ void __launch_bounds__(kThreads, 1) bwd_kernel(BwdParams const p, __grid_constant__ TensorMaps const maps) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // sm_90a code only (family_traits(kSm90)); other targets carry this stub
#else
  using C = Tiles<D, TM>;
  // The swizzled layouts need a 1024-byte aligned base. The declaration asks for it; where the
  // launch has room it asks for up to kSmemSlack<D, TM> bytes more, and the storage starts at the next
  // boundary. A base further off than that would corrupt every operand: stop instead.
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The pad as a broadcast from lane 0: the compiler then knows it warp-uniform, and with it every
  // shared address the kernel derives from the storage, so the operand descriptors are built in
  // uniform registers, where wgmma reads them (9.5% fewer instructions at d128 causal 8k,
  // docs/results/2026-12-07-h100-fa4-instruction-mix.md).
  std::uint32_t const pad = __shfl_sync(0xffffffffu, (1024 - smem_u32(smem_raw) % 1024) % 1024, 0);
  if (pad > static_cast<std::uint32_t>(kSmemSlack<D, TM>)) __trap();
  auto& sm = *reinterpret_cast<SharedStorage<D, TM>*>(smem_raw + pad);
  int const tid = static_cast<int>(threadIdx.x);
  if (tid == 0) {
    mbar_init(smem_u32(&sm.k_full), 1);
    mbar_init(smem_u32(&sm.k_empty), kMmaThreads);
    mbar_init(smem_u32(&sm.v_full), 1);
    mbar_init(smem_u32(&sm.v_empty), kMmaThreads);
    mbar_init(smem_u32(&sm.stages_free), 1);
    for (int s = 0; s < C::kStages; ++s) {
      mbar_init(smem_u32(&sm.q_full[s]), 1);
      mbar_init(smem_u32(&sm.q_empty[s]), kMmaThreads);
    }
    for (int b = 0; b < C::kDqBuffers; ++b) {
      mbar_init(smem_u32(&sm.dq_full[b]), kMmaThreads);
      mbar_init(smem_u32(&sm.dq_empty[b]), 1);
    }
    mbar_init_fence();
  }
  if constexpr (kKernelTraces) {
    if (tid == 0) trace::mark(p.trace, false);
  }
  __syncthreads();
  // The warpgroup, known to the compiler as warp-uniform (a broadcast from lane 0): the operand
  // descriptors derived from it then live in uniform registers, as wgmma takes them, instead of
  // being moved there before every wgmma.
  int const wg = __shfl_sync(0xffffffffu, tid / 128, 0);
  if (wg == 0) {
    regs_dealloc<kProducerRegs>();
    if (tid == 0) {
      produce<Policy, D>(p, maps, sm);
    } else if (tid == 32) {
      write_dq(p, sm);
    }
    return;
  }
  regs_alloc<kMmaRegs>();
  compute<Policy, D, DT>(wg - 1, p, maps, sm);
#endif
}

// ---- Host side: launch and registration ----------------------------------------------------
/// Dynamic shared memory of a CTA: the storage and, where the opt-in limit leaves room, up to
/// 1024 bytes to align it (bwd_kernel).
template <int D, int TM>
inline constexpr int kSmemBytes = static_cast<int>(sizeof(SharedStorage<D, TM>)) + kSmemSlack<D, TM>;

template <class Policy, int D, int DT, int TM>
void launch(BwdParams const& params, int grid, cudaStream_t stream) {
  constexpr int kSmem = kSmemBytes<D, TM>;
  using C = Tiles<D, TM>;
  TensorMaps maps{};
  encode_tensor_maps(params, static_cast<DType>(DT), TensorMapBoxes{D, C::kTM, C::kTN, C::kStatBox}, maps);
  opt_in_dynamic_smem(reinterpret_cast<void const*>(&bwd_kernel<Policy, D, DT, TM>), kSmem);
  bwd_kernel<Policy, D, DT, TM><<<grid, kThreads, kSmem, stream>>>(params, maps);
  DASH_CUDA_CHECK_LAUNCH();
}

/// Resident CTAs per SM: 0 on a device this family's code does not run on (sm_90a: compute
/// capability 9.0 only) or whose shared memory per block is too small.
template <class Policy, int D, int DT, int TM>
int ctas_per_sm() {
  constexpr int kSmem = kSmemBytes<D, TM>;
  int device = 0;
  DASH_CUDA_CHECK(cudaGetDevice(&device));
  int major = 0;
  int minor = 0;
  int limit = 0;
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  DASH_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (!family_runs_on(KernelFamily::kSm90, major, minor) || kSmem > limit) return 0;
  opt_in_dynamic_smem(reinterpret_cast<void const*>(&bwd_kernel<Policy, D, DT, TM>), kSmem);
  int blocks = 0;
  DASH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, bwd_kernel<Policy, D, DT, TM>, kThreads, kSmem));
  return blocks;
}

/// Registers the kernels of `Policy` (its head dims and dtypes) under the family's key.
template <BwdSchedule Policy>
void register_kernels(char const* name) {
  // A generated policy fixes the tiles it was made for: they must be this family's.
  static_assert(Policy::kTileN == Tiles<64>::kTN, "the family's KV tile");
  auto one = [&]<int D, int DT, int TM>() {
    static_assert(Policy::kTileM == 0 || Policy::kTileM == TM, "the policy's Q tile");
    KernelKey const key{D,          TM, Tiles<D, TM>::kTN, Policy::kMaskKind, static_cast<DType>(DT),
                        Policy::kScheduleHash, KernelFamily::kSm90};
    register_bwd_kernel(key, &launch<Policy, D, DT, TM>, &ctas_per_sm<Policy, D, DT, TM>, name);
  };
  auto dtypes = [&]<int D, int TM>() {
    if constexpr (Policy::kDType <= 0) one.template operator()<D, 0, TM>();
    if constexpr (Policy::kDType != 0) one.template operator()<D, 1, TM>();
  };
  constexpr int kTm64 = family_tile_m(KernelFamily::kSm90, 64);
  constexpr int kTm128 = family_tile_m(KernelFamily::kSm90, 128);
  /// The 80-row Q tile at head dim 128 (docs/design.md): registered for the generic policy and
  /// policies made for it; problems without a mask get it by default (family_default_tile_m).
  constexpr int kTm128Full = family_traits(KernelFamily::kSm90).tile_m_d128_full;
  static_assert(Policy::kTileM == 0 || Policy::kTileM == kTm64 || Policy::kTileM == kTm128 ||
                    Policy::kTileM == kTm128Full,
                "the policy's Q tile is one of the family's");
  constexpr bool d64 = Policy::kHeadDim == 0 || Policy::kHeadDim == 64;
  constexpr bool d128 = Policy::kHeadDim == 0 || Policy::kHeadDim == 128;
  if constexpr (d64 && (Policy::kTileM == 0 || Policy::kTileM == kTm64)) dtypes.template operator()<64, kTm64>();
  if constexpr (d128 && (Policy::kTileM == 0 || Policy::kTileM == kTm128)) dtypes.template operator()<128, kTm128>();
  if constexpr (d128 && (Policy::kTileM == 0 || Policy::kTileM == kTm128Full)) {
    dtypes.template operator()<128, kTm128Full>();
  }
}

/// One static instance per policy (runtime/kernels/sm90/generic.cu, each generated sm90 file).
/// Builds without sm_90a code (DASH_SM90A unset: no 90a in the CUDA architectures) hold only the
/// trap stub of the kernel, so they register nothing and the family is absent.
template <BwdSchedule Policy>
struct Registrar {
  Registrar() {
#if defined(DASH_SM90A)
    register_kernels<Policy>(Policy::kScheduleHash == 0 ? "generic-wgmma" : "generated-wgmma");
#endif
  }
};

}  // namespace dash::rt::sm90

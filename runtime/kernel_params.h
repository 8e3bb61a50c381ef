#pragma once
// Plain parameter structs shared by the host API and the kernels. No CUDA headers: the code
// generator's template (runtime/schedule/table_policy.cuh) includes this, and clang parses it.
#include <cstdint>

#include "dagsim/core/host_device.h"
#include "runtime/kernel_trace.h"
#include "runtime/watchdog_record.h"

namespace dash::rt {

enum class DType : std::uint8_t { kBf16 = 0, kFp16 = 1 };

/// Mask kinds as sim::MaskKind; the band is bottom-right aligned: row r sees column c iff
/// r + offset - left <= c <= r + offset + right, offset = len_k - len_q.
inline constexpr int kMaskFull = 0;
inline constexpr int kMaskCausal = 1;
inline constexpr int kMaskWindow = 2;
/// Stands for "no limit" on a side of the band; far beyond any length, no int overflow with it.
inline constexpr int kUnboundedSide = 1 << 28;

/// A (batch, seqlen, heads, head_dim) tensor as FlashAttention lays it out, strides in elements,
/// head_dim contiguous. Varlen tensors are (total_tokens, heads, head_dim): batch_stride unused.
struct TensorRef {
  void* data = nullptr;
  std::int64_t batch_stride = 0;
  std::int64_t row_stride = 0;
  std::int64_t head_stride = 0;
};

/// The problem geometry as the kernels see it. cu_q / cu_k are device arrays of batch + 1
/// cumulative lengths (also for fixed-length batches), used for our own workspaces always and
/// for user tensors when varlen != 0.
struct Geometry {
  int batch = 0;
  int q_heads = 0;
  int kv_heads = 0;
  int seqlen_q = 0;  ///< fixed-length batches; the maximum under varlen
  int seqlen_k = 0;
  int head_dim = 0;
  int varlen = 0;
  int total_q = 0;       ///< sum of q lengths
  int total_k = 0;
  int rows_padded = 0;   ///< total_q rounded up plus one tile: row stride of lse/dpsum per head
  int const* cu_q = nullptr;
  int const* cu_k = nullptr;
  int mask_kind = kMaskFull;
  int mask_left = kUnboundedSide;
  int mask_right = kUnboundedSide;
  float scale = 1.f;       ///< softmax scale
  float scale_log2 = 1.f;  ///< scale * log2(e)
};

/// One work item as the schedule hooks return it.
struct WorkItemRef {
  int batch = -1;  ///< < 0: no item
  int head = 0;    ///< q head
  int kv_tile = 0;
  int num_steps = 0;
  int step_base = 0;  ///< generic tables: index of step 0 in ScheduleTables::steps
  int index = 0;      ///< the item's index in the schedule (CTA by CTA, in order)
};

/// The generic kernel's schedule tables (device pointers), see docs/schedule-protocol.md.
struct ScheduleTables {
  int const* cta_begin = nullptr;      ///< num_ctas + 1
  int const* items = nullptr;          ///< 4 ints per item {batch, head, kv_tile, step_base} + sentinel
  int const* steps = nullptr;          ///< 2 ints per step {q_tile, rank}
  int const* item_dkv_rank = nullptr;  ///< per item; GQA only
  int const* dq_tile_base = nullptr;   ///< per batch: TileIndex::dq_id(b, 0, 0)
  int const* dkv_tile_base = nullptr;  ///< per batch: TileIndex::dkv_id(b, 0, 0)
  int num_ctas = 0;
};

struct FwdParams {
  Geometry g;
  TensorRef q, k, v, o;
  float* lse = nullptr;  ///< natural log, [q_heads][total_q]; +inf for rows that see no key
};

struct PreParams {
  Geometry g;
  TensorRef o, dout;
  float const* lse = nullptr;
  float* lse_log2 = nullptr;  ///< [q_heads][rows_padded]
  float* dpsum = nullptr;     ///< [q_heads][rows_padded]
  float* dq_accum = nullptr;  ///< [total_q][q_heads][head_dim]
  float* dk_accum = nullptr;  ///< GQA: [total_k][kv_heads][head_dim], else null
  float* dv_accum = nullptr;
  int* tickets = nullptr;     ///< dQ tickets then dK/dV tickets
  int num_tickets = 0;
  int zero_dq = 1;            ///< 0: the main kernel's first contribution to each dQ tile stores
  /// > 0: dq_accum is tile-major (TileMajorDq) and this many floats long; the zeroing covers it.
  std::int64_t dq_tile_floats = 0;
};

/// The Hopper family's dQ accumulator layout: one contiguous chunk per dQ tile (TileIndex::dq_id
/// order), laid out as the MMA warpgroups hold the partial, so that they stage it with 16-byte
/// stores at constant offsets (no bank conflicts) and one TMA bulk reduce-add adds a whole step.
/// The tile (tile_m x head_dim, both multiples of 64) is cut into 64 x 64 shares, row block
/// major; a share is one warpgroup's m64n64 wgmma accumulator: 8 column blocks of 8, each 128
/// threads x 4 floats, thread t = 32 w + 4 g + c (warp w, lane group g, column pair c) holding rows
/// 16 w + g and 16 w + g + 8, columns 2 c and 2 c + 1 (docs/design.md, "Hopper family").
/// tile_m == 0: row-major [total_q][q_heads][head_dim] (the portable family's).
struct TileMajorDq {
  /// A multiple of 64: tile_major_offset; else (80 at head dim 128) the transposed layout,
  /// tile_major_offset_t.
  int tile_m = 0;
  int const* dq_tile_base = nullptr;  ///< per batch: the dQ tile id of (b, head 0, tile 0)
};

/// Float offset of element (r, c) of one tile-major dQ tile (the layout above).
DASH_HOST_DEVICE constexpr int tile_major_offset(int r, int c, int head_dim) {
  int const share = (r / 64) * (head_dim / 64) + c / 64;
  int const rr = r % 64;
  int const cc = c % 64;
  int const thread = 32 * (rr / 16) + 4 * (rr % 8) + (cc % 8) / 2;
  int const e = 2 * ((rr % 16) / 8) + cc % 2;
  return share * 4096 + (cc / 8) * 512 + thread * 4 + e;
}

/// Float offset of element (r, c) of one dQ tile of `tile_m` rows in the transposed tile-major
/// layout: the layout of a Q tile whose rows are not a multiple of 64 (80 at head dim 128), whose
/// partial the warpgroups compute as dQ^T (M = 64 head-dim columns per warpgroup, N = tile_m Q
/// rows). Warpgroup w's share (columns 64 w..) is tile_m x 64 floats; in it, the accumulator's
/// register block j (Q rows 8 j..) of thread t = 32 q + 4 g + p (warp q, lane group g, row pair p)
/// is the 16 bytes at 512 j + 4 t: element e holds head-dim column 16 q + g + 8 (e / 2), Q row
/// 8 j + 2 p + e % 2. Row pairs (r, r + 1), r even, are adjacent floats.
DASH_HOST_DEVICE constexpr int tile_major_offset_t(int r, int c, int tile_m) {
  int const w = c / 64;
  int const cc = c % 64;
  int const thread = 32 * (cc / 16) + 4 * (cc % 8) + (r % 8) / 2;
  int const e = 2 * ((cc % 16) / 8) + r % 2;
  return w * tile_m * 64 + (r / 8) * 512 + thread * 4 + e;
}

struct BwdParams {
  Geometry g;
  TensorRef q, k, v, dout, dk, dv;  ///< dk/dv written directly unless GQA
  float const* lse_log2 = nullptr;
  float const* dpsum = nullptr;
  float* dq_accum = nullptr;
  float* dk_accum = nullptr;
  float* dv_accum = nullptr;
  int* dq_ticket = nullptr;
  int* dkv_ticket = nullptr;
  int deterministic = 1;
  /// Every dQ tile with a contributor: the first contribution stores instead of adding, and the
  /// preprocess leaves dq_accum alone. Deterministic mode: rank 0's. Without tickets (the sm90
  /// family only; runtime/kernels/family.h): the first to claim the tile through its ticket, the
  /// others adding once that store is complete.
  int dq_first_stores = 0;
  ScheduleTables tables;
  TicketWatchdog watchdog;  ///< bounds every ticket wait (runtime/ticket.cuh)
  TraceRef trace;           ///< kernel traces (DASH_KERNEL_TRACE builds only; null: none)
};

struct PostParams {
  Geometry g;
  TensorRef dq, dk, dv;
  float const* dq_accum = nullptr;
  TileMajorDq dq_layout;              ///< tile_m 0: row-major
  float const* dk_accum = nullptr;  ///< GQA only, else null
  float const* dv_accum = nullptr;
};

}  // namespace dash::rt

#pragma once
// Warp-level building blocks of the portable (sm_80+) path: mma.sync m16n8k16 with fp32
// accumulators, ldmatrix, cp.async, an XOR-swizzled shared-memory layout and bf16/fp16 packing.
// Fragment layouts (PTX ISA, mma.m16n8k16): g = lane / 4, t = lane % 4;
//   A 16x16: a0 (g, 2t..2t+1) a1 (g+8, 2t..) a2 (g, 2t+8..) a3 (g+8, 2t+8..)
//   B 16x8 : b0 (k 2t..2t+1, n g) b1 (k 2t+8.., n g)
//   C 16x8 : c0 c1 (g, 2t..2t+1)  c2 c3 (g+8, 2t..2t+1)
// Only cuda_bf16.h / cuda_fp16.h: this header is part of the codegen template's parse.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace dash::rt::warp {

template <int kDType>
struct Elem;
template <>
struct Elem<0> {
  using T = __nv_bfloat16;
  static __device__ __forceinline__ std::uint32_t pack(float lo, float hi) {
    __nv_bfloat162 const v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t const*>(&v);
  }
  static __device__ __forceinline__ T from_float(float x) { return __float2bfloat16_rn(x); }
  static __device__ __forceinline__ float to_float(T x) { return __bfloat162float(x); }
};
template <>
struct Elem<1> {
  using T = __half;
  static __device__ __forceinline__ std::uint32_t pack(float lo, float hi) {
    __half2 const v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t const*>(&v);
  }
  static __device__ __forceinline__ T from_float(float x) { return __float2half_rn(x); }
  static __device__ __forceinline__ float to_float(T x) { return __half2float(x); }
};

/// D = A * B + D, 16x8x16, fp32 accumulate.
template <int kDType>
__device__ __forceinline__ void mma(float (&d)[4], std::uint32_t const (&a)[4], std::uint32_t b0,
                                    std::uint32_t b1) {
  if constexpr (kDType == 0) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

__device__ __forceinline__ std::uint32_t smem_addr(void const* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

/// 16-byte async copy global -> shared; src_bytes = 0 zero-fills (rows past the sequence end).
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, void const* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

/// Element offset of (row, col) in a row-major tile of kCols 16-bit elements whose 16-byte chunks
/// are XOR-swizzled by row: the 8 rows an ldmatrix reads at one column land in 8 different bank
/// groups instead of one (kCols >= 64, so there are at least 8 chunks per row).
template <int kCols>
__host__ __device__ constexpr int swz(int row, int col) {
  static_assert(kCols >= 64 && kCols % 64 == 0, "swizzle needs at least 8 chunks per row");
  return row * kCols + ((((col >> 3) ^ row) & 7) | ((col >> 3) & ~7)) * 8 + (col & 7);
}

/// ldmatrix lane addresses (element offsets) for the four fragment shapes used here, in a
/// swizzled row-major tile of kCols columns. lane = threadIdx.x % 32.
/// A (m x k) stored [m][k]: one 16x16 A fragment at (m0, k0).
template <int kCols>
__host__ __device__ constexpr int a_rowmajor(int lane, int m0, int k0) {
  return swz<kCols>(m0 + (lane & 7) + ((lane >> 3) & 1) * 8, k0 + (lane >> 4) * 8);
}
/// A (m x k) stored [k][m] (transposed): with ldmatrix .trans.
template <int kCols>
__host__ __device__ constexpr int a_colmajor(int lane, int m0, int k0) {
  return swz<kCols>(k0 + (lane & 7) + (lane >> 4) * 8, m0 + ((lane >> 3) & 1) * 8);
}
/// B (k x n) stored [n][k]: two n8 blocks (n0, n0+8) x k16 -> {r0,r1} and {r2,r3}.
template <int kCols>
__host__ __device__ constexpr int b_nmajor(int lane, int n0, int k0) {
  return swz<kCols>(n0 + (lane & 7) + (lane >> 4) * 8, k0 + ((lane >> 3) & 1) * 8);
}
/// B (k x n) stored [k][n]: with ldmatrix .trans; two n8 blocks -> {r0,r1} and {r2,r3}.
template <int kCols>
__host__ __device__ constexpr int b_kmajor(int lane, int n0, int k0) {
  return swz<kCols>(k0 + (lane & 7) + ((lane >> 3) & 1) * 8, n0 + (lane >> 4) * 8);
}

/// Async copy of kRows x kCols 16-bit elements (row `r` at src + r * row_stride) into a swizzled
/// tile; rows >= valid_rows are zero-filled. All kThreads threads of the CTA take part, each
/// copying the same column chunk of every (kThreads / (kCols / 8))-th row, so its shared-memory
/// offsets differ by constants (the swizzle repeats every 8 rows) and the loop unrolls fully.
template <int kCols, int kRows, int kThreads, typename T>
__device__ __forceinline__ void load_tile_async(T* smem, T const* src, std::int64_t row_stride,
                                                int valid_rows) {
  constexpr int kChunks = kCols / 8;
  constexpr int kRowStep = kThreads / kChunks;
  static_assert(kThreads % kChunks == 0 && kRowStep % 8 == 0 && kRows % kRowStep == 0,
                "whole rows per pass, a multiple of the swizzle period");
  int const row = static_cast<int>(threadIdx.x) / kChunks;
  int const col = (static_cast<int>(threadIdx.x) % kChunks) * 8;
  std::uint32_t const dst = smem_addr(smem + swz<kCols>(row, col));
  T const* p = src + row * row_stride + col;
#pragma unroll
  for (int i = 0; i < kRows / kRowStep; ++i) {
    bool const ok = row + i * kRowStep < valid_rows;
    cp_async_16(dst + i * kRowStep * kCols * 2, ok ? p + i * kRowStep * row_stride : src, ok ? 16 : 0);
  }
}

/// Fragment addresses in a swizzled tile without per-load index arithmetic. A lane's ldmatrix
/// row address at (row0 + r, 8 * (chunk0 + c)), with r the lane's row in a 16-row block and
/// c in {0, 1} its chunk, is swz_lane(tile, r, c) with bits 4..6 flipped by chunk0 % 8, plus
/// constants: for row0 % 8 == 0 and chunk0 even, (chunk0 + c) ^ row == chunk0 ^ ((c ^ r) & 7) in
/// the low three bits, and the tile's rows are whole multiples of 128 bytes. Needs the tile to be
/// 128-byte aligned in the shared window (checked by the kernels that use it).
template <int kCols>
__host__ __device__ constexpr std::uint32_t swz_lane(std::uint32_t tile_addr, int r, int c) {
  return tile_addr + static_cast<std::uint32_t>(r * kCols * 2 + ((c ^ r) & 7) * 16);
}
template <int kCols>
__host__ __device__ constexpr std::uint32_t swz_frag(std::uint32_t lane_base, int row0, int chunk0) {
  return (lane_base ^ static_cast<std::uint32_t>((chunk0 & 7) * 16)) +
         static_cast<std::uint32_t>(row0 * kCols * 2 + (chunk0 & ~7) * 16);
}
/// The two lane patterns of ldmatrix.x4 used here: P1 for A [m][k] (a_rowmajor) and B [k][n]
/// (b_kmajor); P2 for A [k][m] (a_colmajor) and B [n][k] (b_nmajor).
__host__ __device__ constexpr int p1_row(int lane) { return (lane & 7) + ((lane >> 3) & 1) * 8; }
__host__ __device__ constexpr int p1_chunk(int lane) { return lane >> 4; }
__host__ __device__ constexpr int p2_row(int lane) { return (lane & 7) + (lane >> 4) * 8; }
__host__ __device__ constexpr int p2_chunk(int lane) { return (lane >> 3) & 1; }

/// 2^x in one MUFU instruction (denormal results flush to zero; 2^-inf = 0).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace dash::rt::warp

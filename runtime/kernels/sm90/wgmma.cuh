#pragma once
// wgmma (sm_90a): warpgroup MMA with fp32 accumulators, operands from shared memory through matrix
// descriptors or A from registers. Plain inline PTX (docs/design.md, "Hopper family").
//
// Accumulator of m64nN (per warp w of the warpgroup, g = lane / 4, t = lane % 4): d[4 j + e] is
// row 16 w + g + 8 (e / 2), column 8 j + 2 t + (e % 2), as mma.sync's m16n8 C fragment repeated
// over N / 8 column blocks. A register fragment of m64k16 is mma.sync's m16k16 A fragment of the
// warp's 16 rows: a[0] (g, 2t..2t+1), a[1] (g+8, 2t..), a[2] (g, 2t+8..), a[3] (g+8, 2t+8..), so an
// accumulator's column blocks 2 c and 2 c + 1 packed pairwise are the A fragment of k-block c.
//
// Shared-memory operands use the 128-byte swizzle that TMA writes (CU_TENSOR_MAP_SWIZZLE_128B):
// rows of 64 two-byte elements (128 bytes), 16-byte chunk c of row r stored at chunk c ^ (r % 8),
// from a 1024-byte aligned base; tiles wider than 64 elements are 64-column blocks one after
// another. Descriptors (PTX ISA "matrix descriptor"): start address, leading byte offset (LBO) and
// stride byte offset (SBO), all in 16-byte units, layout 1 = 128-byte swizzle.
//   K-major (the reduction dimension contiguous): SBO = 1024 (8 rows), LBO unused (1); the k-th
//     16-element step inside a 64-column block starts 32 k bytes further.
//   MN-major (M or N contiguous, transposed in the instruction): SBO = 1024 (8 rows of the
//     reduction dimension), LBO = bytes from one 64-column block of M/N to the next.
#include <cstdint>

namespace dash::rt::sm90 {

/// A matrix descriptor of a 128-byte swizzled operand at shared address `addr` (bytes).
__device__ __forceinline__ std::uint64_t smem_desc(std::uint32_t addr, std::uint32_t lbo_bytes,
                                                   std::uint32_t sbo_bytes) {
  return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) |
         (static_cast<std::uint64_t>(lbo_bytes >> 4) << 16) |
         (static_cast<std::uint64_t>(sbo_bytes >> 4) << 32) | (std::uint64_t{1} << 62);
}
/// The same descriptor `bytes` further (a multiple of 16; the start address field does not carry).
/// One 64-bit add, which the compiler issues as one UIADD3.64 on the descriptor's register pair;
/// adding to the low word alone and joining the words made it rebuild the high word with a UMOV
/// before every wgmma.
__device__ __forceinline__ std::uint64_t desc_advance(std::uint64_t desc, std::uint32_t bytes) {
  return desc + (bytes >> 4);
}

/// Orders earlier register and shared-memory accesses before the next wgmma of the warpgroup.
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Waits until at most N committed groups of this warpgroup are pending.
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/// Pins an accumulator for the compiler: no access of it moves across this point (after a wait,
/// before an issue).
template <int N>
__device__ __forceinline__ void fence_operand(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#define DASH_WGMMA_OUT32(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

#define DASH_WGMMA_OUT40(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])

#define DASH_WGMMA_OUT64(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// The instruction text of each form, for element type T ("bf16" or "f16"): accumulator registers
// %0.., then the A descriptor or the four A registers, the B descriptor, the scale-D predicate
// (from `accumulate`), the scales of A and B (1) and the transposes.
#define DASH_WGMMA_ACC32                                                                 \
  "{"                                                                                    \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"                \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"       \
  "}"
#define DASH_WGMMA_ACC64                                                                 \
  "{"                                                                                    \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"                \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"      \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"      \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"       \
  "}"
#define DASH_WGMMA_ACC40                                                                 \
  "{"                                                                                    \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"      \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"      \
  "%32, %33, %34, %35, %36, %37, %38, %39"      \
  "}"
#define DASH_WGMMA_SS_N80(T)                                                                        \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"                                                     \
  "wgmma.mma_async.sync.aligned.m64n80k16.f32." T "." T " " DASH_WGMMA_ACC40 ", %40, %41, p, 1, 1, %43, %44;\n}\n"
#define DASH_WGMMA_SS_N64(T)                                                                        \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                     \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32." T "." T " " DASH_WGMMA_ACC32 ", %32, %33, p, 1, 1, %35, %36;\n}\n"
#define DASH_WGMMA_SS_N128(T)                                                                       \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                     \
  "wgmma.mma_async.sync.aligned.m64n128k16.f32." T "." T " " DASH_WGMMA_ACC64 ", %64, %65, p, 1, 1, %67, %68;\n}\n"
#define DASH_WGMMA_RS_N64(T)                                                                         \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                                      \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32." T "." T " " DASH_WGMMA_ACC32 ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
#define DASH_WGMMA_RS_N128(T)                                                                        \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                                      \
  "wgmma.mma_async.sync.aligned.m64n128k16.f32." T "." T " " DASH_WGMMA_ACC64 ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"

/// D (64 x 64, fp32) (+)= A (64 x 16, shared) * B (16 x 64, shared); TA/TB: operand MN-major.
template <int DT, int TA, int TB>
__device__ __forceinline__ void mma_ss_n64(float (&d)[32], std::uint64_t a, std::uint64_t b, int accumulate) {
  if constexpr (DT == 0) {
    asm volatile(DASH_WGMMA_SS_N64("bf16") : DASH_WGMMA_OUT32(d) : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB));
  } else {
    asm volatile(DASH_WGMMA_SS_N64("f16") : DASH_WGMMA_OUT32(d) : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB));
  }
}

/// D (64 x 80, fp32) (+)= A (64 x 16, shared) * B (16 x 80, shared); TA/TB: operand MN-major. The
/// 80-row Q tile's S^T, dP^T and transposed dQ (PTX takes any N that is a multiple of 8 up to 256).
template <int DT, int TA, int TB>
__device__ __forceinline__ void mma_ss_n80(float (&d)[40], std::uint64_t a, std::uint64_t b, int accumulate) {
  if constexpr (DT == 0) {
    asm volatile(DASH_WGMMA_SS_N80("bf16") : DASH_WGMMA_OUT40(d) : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB));
  } else {
    asm volatile(DASH_WGMMA_SS_N80("f16") : DASH_WGMMA_OUT40(d) : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB));
  }
}

/// D (64 x 128, fp32) (+)= A (64 x 16, shared) * B (16 x 128, shared); TA/TB: operand MN-major.
template <int DT, int TA, int TB>
__device__ __forceinline__ void mma_ss_n128(float (&d)[64], std::uint64_t a, std::uint64_t b, int accumulate) {
  if constexpr (DT == 0) {
    asm volatile(DASH_WGMMA_SS_N128("bf16") : DASH_WGMMA_OUT64(d) : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB));
  } else {
    asm volatile(DASH_WGMMA_SS_N128("f16") : DASH_WGMMA_OUT64(d) : "l"(a), "l"(b), "r"(accumulate), "n"(TA), "n"(TB));
  }
}

/// D (64 x 64, fp32) += A (64 x 16, registers: an m64k16 fragment) * B (16 x 64, shared); TB: B MN-major.
template <int DT, int TB>
__device__ __forceinline__ void mma_rs_n64(float (&d)[32], std::uint32_t const (&a)[4], std::uint64_t b, int accumulate) {
  if constexpr (DT == 0) {
    asm volatile(DASH_WGMMA_RS_N64("bf16")
                 : DASH_WGMMA_OUT32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TB));
  } else {
    asm volatile(DASH_WGMMA_RS_N64("f16")
                 : DASH_WGMMA_OUT32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TB));
  }
}

/// D (64 x 128, fp32) += A (64 x 16, registers: an m64k16 fragment) * B (16 x 128, shared); TB: B MN-major.
template <int DT, int TB>
__device__ __forceinline__ void mma_rs_n128(float (&d)[64], std::uint32_t const (&a)[4], std::uint64_t b, int accumulate) {
  if constexpr (DT == 0) {
    asm volatile(DASH_WGMMA_RS_N128("bf16")
                 : DASH_WGMMA_OUT64(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TB));
  } else {
    asm volatile(DASH_WGMMA_RS_N128("f16")
                 : DASH_WGMMA_OUT64(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate), "n"(TB));
  }
}

}  // namespace dash::rt::sm90

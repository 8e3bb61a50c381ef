#pragma once
// stmatrix (sm_90): a warp stores four 8 x 8 matrices of 16-bit elements from registers in the
// mma accumulator/fragment layout (thread i's register k holds row i / 4, columns 2 (i % 4) and
// + 1 of matrix k); lane l gives the shared address of row l % 8 of matrix l / 8.
#include <cstdint>

namespace dash::rt::sm90 {

__device__ __forceinline__ void stmatrix_x4(std::uint32_t addr, std::uint32_t const (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

/// The same four matrices stored transposed: thread i's register k holds column i / 4, rows
/// 2 (i % 4) and + 1 of matrix k (an accumulator's rows become the stored matrix's columns).
__device__ __forceinline__ void stmatrix_x4_trans(std::uint32_t addr, std::uint32_t const (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

}  // namespace dash::rt::sm90

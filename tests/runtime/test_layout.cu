// Host-side checks of the portable kernels' shared-memory addressing (runs without a GPU): the
// one-XOR fragment addresses the backward kernel uses (warp::swz_frag on a per-lane base) must
// land on exactly the element the plain swizzle (warp::swz) and the ldmatrix lane maps
// (a_rowmajor, a_colmajor, b_nmajor, b_kmajor) name, for every lane and every fragment origin the
// kernel uses.
#include <catch2/catch.hpp>

#include <utility>

#include <vector>

#include "runtime/kernel_params.h"
#include "runtime/warp_mma.cuh"

namespace {

namespace w = dash::rt::warp;

// Byte address of a 16-bit element, given its offset in a tile that starts at byte `tile`.
std::uint32_t element_addr(std::uint32_t tile, int element_offset) {
  return tile + static_cast<std::uint32_t>(element_offset * 2);
}

template <int kCols, int kRows>
void check_tile(std::uint32_t tile) {
  for (int lane = 0; lane < 32; ++lane) {
    std::uint32_t const p1 = w::swz_lane<kCols>(tile, w::p1_row(lane), w::p1_chunk(lane));
    std::uint32_t const p2 = w::swz_lane<kCols>(tile, w::p2_row(lane), w::p2_chunk(lane));
    for (int row0 = 0; row0 + 16 <= kRows; row0 += 16) {
      for (int col0 = 0; col0 + 16 <= kCols; col0 += 16) {
        // a_rowmajor / b_kmajor take (m0 | n0, k0 | ...) in their own argument order.
        REQUIRE(w::swz_frag<kCols>(p1, row0, col0 / 8) ==
                element_addr(tile, w::a_rowmajor<kCols>(lane, row0, col0)));
        REQUIRE(w::swz_frag<kCols>(p1, row0, col0 / 8) ==
                element_addr(tile, w::b_kmajor<kCols>(lane, col0, row0)));
        REQUIRE(w::swz_frag<kCols>(p2, row0, col0 / 8) ==
                element_addr(tile, w::a_colmajor<kCols>(lane, col0, row0)));
        REQUIRE(w::swz_frag<kCols>(p2, row0, col0 / 8) ==
                element_addr(tile, w::b_nmajor<kCols>(lane, row0, col0)));
      }
    }
  }
}

TEST_CASE("swz_frag: one XOR on a per-lane base gives the swizzled ldmatrix addresses", "[layout]") {
  // Tiles of the backward kernel: K, V (128 x D), Q, dO (64 x D), dS^T (128 x 64); bases on
  // 128-byte boundaries, not only at 0.
  for (std::uint32_t tile : {0u, 128u, 4096u + 384u}) {
    check_tile<64, 128>(tile);
    check_tile<128, 128>(tile);
    check_tile<64, 64>(tile);
    check_tile<128, 64>(tile);
  }
}

TEST_CASE("swz_frag composes: a base moved by a warp's chunk offset, then by a constant one", "[layout]") {
  // The dQ GEMM folds the warp's Q-row offset (chunks 0, 2, 4, 6) into its dS^T base and adds the
  // 16-row block (chunk 0 or 2) later; the two chunk offsets never share a bit in the low three.
  for (int lane = 0; lane < 32; ++lane) {
    std::uint32_t const lane_base = w::swz_lane<64>(1024u, w::p2_row(lane), w::p2_chunk(lane));
    // (warp chunk, 16-row block): d128 has 2 warp row groups of 2 blocks, d64 4 groups of 1.
    for (auto [warp_chunk, block] : {std::pair{0, 0}, {0, 1}, {4, 0}, {4, 1}, {2, 0}, {6, 0}}) {
      for (int kk = 0; kk < 8; ++kk) {
        std::uint32_t const folded =
            w::swz_frag<64>(w::swz_frag<64>(lane_base, 0, warp_chunk), kk * 16, 2 * block);
        REQUIRE(folded == w::swz_frag<64>(lane_base, kk * 16, warp_chunk + 2 * block));
        REQUIRE(folded == element_addr(1024u, w::a_colmajor<64>(lane, 8 * warp_chunk + 16 * block, kk * 16)));
      }
    }
  }
}

TEST_CASE("swz_frag catches a wrong lane pattern", "[layout]") {
  // The check above can fail: P1's base with P2's lane map names other elements.
  int mismatches = 0;
  for (int lane = 0; lane < 32; ++lane) {
    std::uint32_t const p1 = w::swz_lane<128>(0u, w::p1_row(lane), w::p1_chunk(lane));
    mismatches += w::swz_frag<128>(p1, 0, 0) != element_addr(0u, w::b_nmajor<128>(lane, 0, 0)) ? 1 : 0;
  }
  REQUIRE(mismatches > 0);
}

TEST_CASE("tile-major dQ: a permutation of each tile, laid out as the warpgroups hold the partial",
          "[layout]") {
  for (auto const [tm, d] : {std::pair{64, 128}, std::pair{128, 64}}) {
    std::vector<int> seen(static_cast<std::size_t>(tm * d), 0);
    for (int r = 0; r < tm; ++r) {
      for (int c = 0; c < d; ++c) {
        int const at = dash::rt::tile_major_offset(r, c, d);
        REQUIRE(at >= 0);
        REQUIRE(at < tm * d);
        if (c % 2 == 1) REQUIRE(at == dash::rt::tile_major_offset(r, c - 1, d) + 1);  // column pairs adjacent
        ++seen[static_cast<std::size_t>(at)];
      }
    }
    for (int n : seen) REQUIRE(n == 1);
    // The m64n64 accumulator of each 64 x 64 share: thread t's column block j (rows 16 w + g and
    // + 8, columns 8 j + 2 c and + 1) is the 16 bytes at 512 j + 4 t of the share, so a warp's
    // store of one block covers 512 contiguous bytes (every bank four times, no conflict).
    for (int share = 0; share < tm * d / 4096; ++share) {
      int const r0 = (share / (d / 64)) * 64;
      int const c0 = (share % (d / 64)) * 64;
      for (int t = 0; t < 128; ++t) {
        int const w = t / 32;
        int const g = (t % 32) / 4;
        int const cp = t % 4;
        for (int j = 0; j < 8; ++j) {
          for (int e = 0; e < 4; ++e) {
            int const r = r0 + 16 * w + g + 8 * (e / 2);
            int const c = c0 + 8 * j + 2 * cp + e % 2;
            REQUIRE(dash::rt::tile_major_offset(r, c, d) == share * 4096 + 512 * j + 4 * t + e);
          }
        }
      }
    }
  }
}

TEST_CASE("transposed tile-major dQ (80-row tiles): a permutation, laid out as the dQ^T accumulators",
          "[layout]") {
  for (int const tm : {80, 64, 16}) {
    int const d = 128;
    std::vector<int> seen(static_cast<std::size_t>(tm * d), 0);
    for (int r = 0; r < tm; ++r) {
      for (int c = 0; c < d; ++c) {
        int const at = dash::rt::tile_major_offset_t(r, c, tm);
        REQUIRE(at >= 0);
        REQUIRE(at < tm * d);
        if (r % 2 == 1) REQUIRE(at == dash::rt::tile_major_offset_t(r - 1, c, tm) + 1);  // row pairs adjacent
        ++seen[static_cast<std::size_t>(at)];
      }
    }
    for (int n : seen) REQUIRE(n == 1);
    // Warpgroup w's m64n(tm) accumulator of dQ^T: thread t's register block j (rows of the
    // accumulator = head-dim columns 16 q + g and + 8, its columns = Q rows 8 j + 2 p and + 1) is the
    // 16 bytes at 512 j + 4 t of the warpgroup's share.
    for (int w = 0; w < d / 64; ++w) {
      for (int t = 0; t < 128; ++t) {
        int const q = t / 32;
        int const g = (t % 32) / 4;
        int const p = t % 4;
        for (int j = 0; j < tm / 8; ++j) {
          for (int e = 0; e < 4; ++e) {
            int const c = 64 * w + 16 * q + g + 8 * (e / 2);
            int const r = 8 * j + 2 * p + e % 2;
            REQUIRE(dash::rt::tile_major_offset_t(r, c, tm) == w * tm * 64 + 512 * j + 4 * t + e);
          }
        }
      }
    }
  }
}

}  // namespace

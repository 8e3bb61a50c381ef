#pragma once
// The bulk copy engine (sm_90): tiled tensor loads through a tensor map (TMA), 1-D bulk copies
// and bulk reduce-adds from shared to global memory, their completion groups, and the proxy
// fences between generic accesses and the engine's (async proxy) ones.
#include <cstdint>

namespace dash::rt::sm90 {

/// A 4-D box of the tensor map at `map` (a __grid_constant__ parameter) into shared memory at
/// `dst`; completes `bytes` of transactions on the mbarrier `bar`.
__device__ __forceinline__ void tma_load_4d(std::uint32_t dst, void const* map, std::uint32_t bar, int c0, int c1,
                                            int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], "
      "[%2];\n" ::"r"(dst),
      "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, void const* map, std::uint32_t bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          dst),
      "l"(map), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}
/// Shared memory at `src` into a 4-D box of the tensor map at `map`, in this thread's current bulk
/// group; elements outside the tensor (rows past its end) are not written.
__device__ __forceinline__ void tma_store_4d(void const* map, std::uint32_t src, int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(map),
               "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void prefetch_tensor_map(void const* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

/// global[dst .. dst + bytes) += shared[src ..) element-wise in fp32 (bytes a multiple of 16, both
/// 16-byte aligned), in this thread's current bulk group.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst, std::uint32_t src, std::uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst), "r"(src),
               "r"(bytes)
               : "memory");
}
/// global[dst ..) = shared[src ..), in this thread's current bulk group.
__device__ __forceinline__ void bulk_store(void* dst, std::uint32_t src, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/// Waits until every bulk group of this thread has completed: its writes are performed in global
/// memory (not merely its shared-memory source read).
__device__ __forceinline__ void bulk_wait_complete() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
/// Waits until every bulk group of this thread has read its shared-memory source.
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }

/// Orders this thread's generic shared-memory writes before later async-proxy reads of them
/// (wgmma operands, bulk copies), once a barrier has passed them on.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
/// Orders this thread's earlier generic global accesses (a ticket's acquire) before its later
/// async-proxy global accesses (the bulk reduce-add).
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

}  // namespace dash::rt::sm90

#pragma once
// Reserving the simulator's large flat buffers.
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace dash::sim {

/// Reserves `count` elements. Large buffers are faulted in page by page; on Linux, asking for
/// transparent huge pages turns ~15k page faults of a 262k-step DAG into a few dozen. A hint
/// only: no effect on results.
template <typename T>
void reserve_large(std::vector<T>& buffer, std::size_t count) {
  buffer.reserve(count);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  std::size_t constexpr kHuge = std::size_t{2} << 20;
  auto const first = reinterpret_cast<std::uintptr_t>(buffer.data());
  auto const last = first + count * sizeof(T);
  auto const begin = (first + kHuge - 1) & ~(kHuge - 1);
  auto const end = last & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

}  // namespace dash::sim

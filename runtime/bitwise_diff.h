#pragma once
// Counts differing 16-bit words between two device buffers, on the device: the grid determinism
// check compares hundreds of MB per run, far faster there than through host copies.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace dash::rt {

/// Number of 16-bit words that differ between device buffers `a` and `b` of `words` words each.
/// Synchronizes `stream`. Bitwise: two NaNs of different payload differ; -0 and +0 differ.
std::int64_t count_differing_words(void const* a, void const* b, std::size_t words, cudaStream_t stream);

}  // namespace dash::rt

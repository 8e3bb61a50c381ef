#pragma once
// Random tensors filled on the GPU, for tests whose inputs are too large to generate on the host
// (billions of elements): element i of a fill is a function of (seed, i) alone.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/kernel_params.h"

namespace dash::rt::test {

/// `n` bf16/fp16 values at `data`, uniform in [-1, 1) from splitmix64(seed, i), never zero; on `stream`.
void fill_random_device(void* data, std::int64_t n, DType dtype, std::uint64_t seed, cudaStream_t stream);

}  // namespace dash::rt::test

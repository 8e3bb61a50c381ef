#pragma once
// Launchers of the kernels around the backward main kernel (internal to dash_rt; the public
// interface is runtime/attention.h). Each checks its launch.
#include <cuda_runtime_api.h>

#include "runtime/kernel_params.h"

namespace dash::rt {

void launch_forward(FwdParams const& params, DType dtype, cudaStream_t stream);
/// dPsum = rowsum(dO o O), LSE in log2 units, zeroes the tickets and the fp32 accumulators (dQ's
/// only if params.zero_dq).
void launch_preprocess(PreParams const& params, DType dtype, cudaStream_t stream);
/// dQ (and dK/dV under GQA) from the fp32 accumulators to the output dtype.
void launch_postprocess(PostParams const& params, DType dtype, cudaStream_t stream);
/// Zeroes dK and dV rows [row_begin, row_end) of (batch, kv head) tiles listed as int4
/// {batch, kv_head, row_begin, row_end}: KV tiles no query sees get no work item.
void launch_zero_rows(Geometry const& g, TensorRef dk, TensorRef dv, int const* tiles, int count,
                      DType dtype, cudaStream_t stream);

}  // namespace dash::rt

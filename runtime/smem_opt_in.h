#pragma once
// Dynamic shared memory above 48 KB must be opted into per kernel, on each device that launches it.
// Light header (part of the codegen template's parse).

namespace dash::rt {

/// Sets cudaFuncAttributeMaxDynamicSharedMemorySize of `kernel` to `bytes` on the current device,
/// the first time a (kernel, device) pair asks; later calls cost a lookup. Thread-safe.
void opt_in_dynamic_smem(void const* kernel, int bytes);

}  // namespace dash::rt

#pragma once
// Registry of backward main kernels. Each family's generic, table-driven kernel
// (runtime/kernels/<family>/generic.cu) and every generated specialization (generated/*.cu: a
// specialized policy plugged into a family's kernel) register here at static initialisation; the
// host API asks for the best match of a family, problem and schedule.
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "runtime/kernel_params.h"
#include "runtime/kernels/family.h"

namespace dash::rt {

struct KernelKey {
  int head_dim = 128;
  int tile_m = 64;
  int tile_n = 128;
  int mask_kind = -1;                ///< -1: any (runtime flag); else kMaskFull/Causal/Window
  DType dtype = DType::kBf16;
  std::uint64_t schedule_hash = 0;   ///< 0: any schedule (reads the uploaded tables)
  KernelFamily family = KernelFamily::kSm80;
  friend bool operator==(KernelKey const&, KernelKey const&) = default;
};

/// Launches the main kernel with `grid` CTAs on `stream` (checks the launch).
using BwdLaunchFn = void (*)(BwdParams const& params, int grid, cudaStream_t stream);
/// CTAs of this kernel that fit on one SM at once (persistent launches need them all resident).
using CtasPerSmFn = int (*)();

struct BwdKernel {
  KernelKey key;
  BwdLaunchFn launch = nullptr;
  CtasPerSmFn ctas_per_sm = nullptr;
  std::string name;
};

void register_bwd_kernel(KernelKey const& key, BwdLaunchFn launch, CtasPerSmFn ctas_per_sm,
                         char const* name);

/// A kernel whose key has exactly `wanted`'s family, schedule hash, head_dim, tiles, dtype and whose
/// mask kind is `wanted`'s or any; else the family's generic one (hash 0, mask any). Throws
/// UserError when even the generic kernel does not exist (unsupported family, head_dim or tiles).
BwdKernel find_bwd_kernel(KernelKey const& wanted);

std::vector<BwdKernel> registered_bwd_kernels();

}  // namespace dash::rt

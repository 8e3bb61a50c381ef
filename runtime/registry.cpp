#include "runtime/registry.h"

#include <mutex>

#include "dagsim/core/error.h"

namespace dash::rt {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<BwdKernel> kernels;
};

// Function-local: registrars in other translation units may run before this file's statics.
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_bwd_kernel(KernelKey const& key, BwdLaunchFn launch, CtasPerSmFn ctas_per_sm,
                         char const* name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> const lock(r.mutex);
  for (auto const& k : r.kernels) DASH_ASSERT(!(k.key == key));  // two kernels, one key
  r.kernels.push_back(BwdKernel{key, launch, ctas_per_sm, name});
}

BwdKernel find_bwd_kernel(KernelKey const& wanted) {
  Registry& r = registry();
  std::lock_guard<std::mutex> const lock(r.mutex);
  BwdKernel const* generic = nullptr;
  BwdKernel const* special = nullptr;
  for (auto const& k : r.kernels) {
    if (k.key.family != wanted.family || k.key.head_dim != wanted.head_dim || k.key.tile_m != wanted.tile_m ||
        k.key.tile_n != wanted.tile_n || k.key.dtype != wanted.dtype) {
      continue;
    }
    bool const mask_ok = k.key.mask_kind < 0 || k.key.mask_kind == wanted.mask_kind;
    if (k.key.schedule_hash == 0 && k.key.mask_kind < 0) generic = &k;
    if (k.key.schedule_hash != 0 && k.key.schedule_hash == wanted.schedule_hash && mask_ok) special = &k;
  }
  if (special != nullptr) return *special;
  if (generic == nullptr) {
    user_error("no {} backward kernel for head_dim {} with {}x{} tiles", family_name(wanted.family),
               wanted.head_dim, wanted.tile_m, wanted.tile_n);
  }
  return *generic;
}

std::vector<BwdKernel> registered_bwd_kernels() {
  Registry& r = registry();
  std::lock_guard<std::mutex> const lock(r.mutex);
  return r.kernels;
}

}  // namespace dash::rt

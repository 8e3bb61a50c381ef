#include "runtime/watchdog.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "runtime/cuda_check.h"

namespace dash::rt {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Watchdog const*>& registry() {
  static std::vector<Watchdog const*> r;
  return r;
}

}  // namespace

void Watchdog::FreeHost::operator()(WatchdogRecord* p) const { cudaFreeHost(p); }

Watchdog::Watchdog() : claim_(sizeof(int)) {
  DASH_CUDA_CHECK(cudaMemset(claim_.as<int>(), 0, sizeof(int)));
  void* host = nullptr;
  DASH_CUDA_CHECK(cudaHostAlloc(&host, sizeof(WatchdogRecord), cudaHostAllocMapped | cudaHostAllocPortable));
  host_.reset(static_cast<WatchdogRecord*>(host));
  *host_ = WatchdogRecord{};
  void* device = nullptr;
  DASH_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  device_ = static_cast<WatchdogRecord*>(device);
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(this);
}

// The members free the record and the claim (no throw: after a trap the frees fail and change
// nothing).
Watchdog::~Watchdog() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& r = registry();
  r.erase(std::remove(r.begin(), r.end(), this), r.end());
}

TicketWatchdog Watchdog::view(std::chrono::nanoseconds limit) const {
  return TicketWatchdog{device_, claim_.as<int>(), static_cast<std::uint32_t>(limit.count() / 1024)};
}

std::string Watchdog::report() const {
  // The kernel stored `expired` last, after a system-scope fence; the host reads it first.
  auto const* r = static_cast<WatchdogRecord volatile const*>(host_.get());
  if (r->expired != 1) return {};
  std::int32_t const cta = r->cta;
  std::int32_t const at = r->tile;
  std::int32_t const rank = r->rank;
  std::int32_t const seen = r->seen;
  std::int64_t const waited_ns = r->waited_ns;
  std::string const tile = at >= 0 ? fmt::format("dQ tile {}", at) : fmt::format("dK/dV tile {}", -1 - at);
  return fmt::format(
      "ticket wait expired: CTA {} waited {:.3f} s for {} to reach rank {} (it reads {}); the "
      "schedule's tables are corrupt or its order cannot finish",
      cta, static_cast<double>(waited_ns) * 1e-9, tile, rank, seen);
}

std::string expired_wait_report() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (Watchdog const* w : registry()) {
    std::string r = w->report();
    if (!r.empty()) return r;
  }
  return {};
}

}  // namespace dash::rt

#pragma once
// The host side of the ticket watchdog (runtime/watchdog_record.h): the mapped record a backward's
// kernels report an expired ticket wait to. Every live Watchdog is registered, so that a CUDA error
// thrown anywhere (throw_cuda_error) names the wait that ended the kernel: a TicketTimeout instead
// of a bare "unspecified launch failure".
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/device_buffer.h"
#include "runtime/watchdog_record.h"

namespace dash::rt {

/// How long one ticket wait may last before the kernel stops. A valid schedule's waits last a
/// few steps (microseconds); the limit is far above any, so only a schedule that cannot finish
/// (corrupt tables, a deadlock) reaches it.
inline constexpr std::chrono::milliseconds kDefaultTicketTimeout{60'000};

class Watchdog {
 public:
  /// Allocates the device-side claim and the mapped record on the current device. Throws CudaError.
  Watchdog();
  ~Watchdog();
  Watchdog(Watchdog&&) = delete;  // registered by address
  Watchdog& operator=(Watchdog&&) = delete;
  Watchdog(Watchdog const&) = delete;
  Watchdog& operator=(Watchdog const&) = delete;

  /// The kernels' view, with waits bounded by `limit`.
  [[nodiscard]] TicketWatchdog view(std::chrono::nanoseconds limit) const;
  /// The expired wait as one sentence; empty while none expired.
  [[nodiscard]] std::string report() const;

 private:
  struct FreeHost {
    void operator()(WatchdogRecord* p) const;
  };
  DeviceBuffer claim_;  ///< one int, 0 until a CTA claims the record
  std::unique_ptr<WatchdogRecord, FreeHost> host_;
  WatchdogRecord* device_ = nullptr;  ///< host_ as the device addresses it
};

/// The report of the first registered Watchdog whose record holds an expired wait; empty if none.
std::string expired_wait_report();

}  // namespace dash::rt

#include "runtime/cuda_check.h"

#include <string>

#include <fmt/format.h>

#include "runtime/watchdog.h"

namespace dash::rt {

void throw_cuda_error(cudaError_t err, char const* call, char const* file, int line) {
  std::string const what =
      fmt::format("CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(err), cudaGetErrorString(err), call, file, line);
  // A kernel that trapped on an expired ticket wait left its record: name the wait.
  std::string const wait = expired_wait_report();
  if (!wait.empty()) throw TicketTimeout(wait + "; " + what);
  throw CudaError(what);
}

}  // namespace dash::rt

#pragma once
// Every CUDA runtime call is checked: an error becomes a CudaError naming the call and where it
// was made. Light headers only (part of the codegen template's parse).
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace dash::rt {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The CUDA error of a kernel that stopped because a ticket wait expired (runtime/watchdog.h): its
/// message names the wait (CTA, tile, expected rank, what the ticket read).
struct TicketTimeout : CudaError {
  using CudaError::CudaError;
};

[[noreturn]] void throw_cuda_error(cudaError_t err, char const* call, char const* file, int line);

}  // namespace dash::rt

#define DASH_CUDA_CHECK(call)                                                       \
  do {                                                                              \
    cudaError_t const dash_err_ = (call);                                           \
    if (dash_err_ != cudaSuccess) ::dash::rt::throw_cuda_error(dash_err_, #call, __FILE__, __LINE__); \
  } while (0)

/// After a kernel launch: launch-configuration errors surface here.
#define DASH_CUDA_CHECK_LAUNCH() DASH_CUDA_CHECK(cudaGetLastError())

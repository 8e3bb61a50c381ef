#pragma once
// One cudaMalloc'd block, owned: the runtime's workspace and tables, the GPU reference's arrays
// and the benchmark's input sets all hold their device memory through it.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "runtime/cuda_check.h"

namespace dash::rt {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// `bytes` of device memory on the current device (none for 0). Throws CudaError.
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) DASH_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);  // no throw from a destructor; a failing free changes nothing
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(DeviceBuffer const&) = delete;
  DeviceBuffer& operator=(DeviceBuffer const&) = delete;

  template <typename T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(ptr_);
  }
  [[nodiscard]] std::size_t size_bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// A device copy of `host` (at least one element's room, so that the pointer is never null).
template <typename T>
DeviceBuffer upload(std::vector<T> const& host) {
  DeviceBuffer buf(std::max<std::size_t>(host.size(), 1) * sizeof(T));
  if (!host.empty()) {
    DASH_CUDA_CHECK(cudaMemcpy(buf.as<T>(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  return buf;
}

}  // namespace dash::rt

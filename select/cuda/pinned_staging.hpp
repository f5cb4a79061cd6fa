#pragma once
// Transfers between pageable host memory (std::vector, images from the FITS reader) and the
// device through two pinned chunks allocated once: the host copies chunk i + 1 into one while
// the DMA engine moves chunk i out of the other. Pageable cudaMemcpyAsync stages the same way
// inside the driver, but in small pieces, under a lock shared by every thread, and without
// letting the caller overlap anything; pinning the caller's buffers instead
// (cudaHostRegister) costs milliseconds per buffer, which a batch would pay per observation.
//
// One owner thread at a time (it belongs to one GpuResources). Either stream may be used from
// one call to the next: each chunk's event tells when it may be refilled, whatever the stream.

#include <cuda_runtime.h>

#include <array>
#include <cstddef>

#include "select/cuda/event.hpp"

namespace gpuclean::cuda {

class PinnedStaging {
 public:
  static constexpr std::size_t kDefaultChunkBytes = std::size_t{8} << 20;

  /// Two pinned chunks of `chunk_bytes` (> 0) each.
  explicit PinnedStaging(std::size_t chunk_bytes = kDefaultChunkBytes);
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  /// Device `dst` = host `src` (`bytes` of them), in stream order on `stream`. Returns once
  /// `src` may be reused or freed; the last chunks may still be on their way, and work enqueued
  /// on `stream` afterwards sees them.
  void upload(cudaStream_t stream, void* dst, const void* src, std::size_t bytes);

  /// Host `dst` = device `src`, after the work enqueued on `stream` before the call. Returns
  /// when `dst` holds the data.
  void download(cudaStream_t stream, void* dst, const void* src, std::size_t bytes);

  std::size_t chunk_bytes() const { return chunk_; }

 private:
  struct Slot {
    void* host = nullptr;
    Event done;  // recorded after the last DMA that used this chunk
  };
  Slot& slot(std::size_t i) { return slots_[(first_ + i) & 1u]; }

  std::size_t chunk_;
  std::array<Slot, 2> slots_;
  std::size_t first_ = 0;  // alternates so that back-to-back calls keep both chunks busy
};

template <class T>
void upload(PinnedStaging& staging, cudaStream_t stream, T* dst, const T* src, std::size_t count) {
  staging.upload(stream, dst, src, count * sizeof(T));
}

template <class T>
void download(PinnedStaging& staging, cudaStream_t stream, T* dst, const T* src, std::size_t count) {
  staging.download(stream, dst, src, count * sizeof(T));
}

}  // namespace gpuclean::cuda

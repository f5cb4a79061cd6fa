#pragma once
// An owned CUDA event without timing: the cheap kind, for ordering work across streams and for
// the host to wait on one point of a stream.

#include <cuda_runtime.h>

#include "select/cuda/cuda_check.hpp"

namespace gpuclean::cuda {

class Event {
 public:
  Event() { GPUCLEAN_CUDA_TRY(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~Event() { GPUCLEAN_CUDA_TRY_NO_THROW(cudaEventDestroy(event_)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

  /// Marks the point `stream` has reached (in stream order).
  void record(cudaStream_t stream) { GPUCLEAN_CUDA_TRY(cudaEventRecord(event_, stream)); }
  /// Work enqueued on `stream` from now on waits for the last recorded point; no host wait.
  void wait_on(cudaStream_t stream) const { GPUCLEAN_CUDA_TRY(cudaStreamWaitEvent(stream, event_, 0)); }
  /// The host waits for the last recorded point (at once when none was recorded).
  void synchronize() const { GPUCLEAN_CUDA_TRY(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace gpuclean::cuda

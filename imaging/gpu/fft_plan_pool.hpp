#pragma once
// Batched nu × nv C2C cuFFT plans kept across calls (a plan of 10240² costs tens of ms; an image
// run inverts channel after channel with the same plan). A lease takes a plan out of the pool,
// so two threads never share one; it goes back when the lease ends. The work area is the
// caller's (it is part of the gridder's memory plan).

#include <cufft.h>

#include <cstddef>

namespace gpuclean::imaging::gpu {

class FftPlanLease {
 public:
  /// A plan for `batch` consecutive nu × nv grids ([v][u] row-major) on the current device.
  FftPlanLease(std::size_t nu, std::size_t nv, int batch);
  ~FftPlanLease();
  FftPlanLease(const FftPlanLease&) = delete;
  FftPlanLease& operator=(const FftPlanLease&) = delete;

  std::size_t work_bytes() const { return work_bytes_; }
  /// Runs on `stream` with `work` (work_bytes()) as its work area from now on.
  void bind(cudaStream_t stream, void* work);
  /// In place: forward e^{−2πi…} (FFTW_FORWARD), inverse e^{+2πi…}, unnormalised.
  void forward(float2* data);
  void inverse(float2* data);

 private:
  int device_;
  std::size_t nu_, nv_;
  int batch_;
  cufftHandle handle_ = 0;
  std::size_t work_bytes_ = 0;
};

}  // namespace gpuclean::imaging::gpu

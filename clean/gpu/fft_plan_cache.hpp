#pragma once
// cuFFT plans kept across runs: making a plan costs milliseconds to tens of milliseconds, which
// a batch of same-sized observations should pay once. One cache per device; not thread-safe.

#include <cufft.h>

#include <cstddef>
#include <list>
#include <memory>

#include "select/cuda/device_buffer.hpp"

namespace gpuclean::clean::gpu {

/// Forward (R2C) and inverse (C2R) plans of one padded size, with their shared work area.
struct FftPlans {
  std::size_t pw = 0, ph = 0;
  cufftHandle forward = 0, inverse = 0;
  cuda::DeviceBuffer<std::byte> work;
  FftPlans() = default;
  FftPlans(const FftPlans&) = delete;
  FftPlans& operator=(const FftPlans&) = delete;
  ~FftPlans();
};

class FftPlanCache {
 public:
  /// Sizes kept at once: a restoration's padded size and the PSF's, for two image sizes.
  static constexpr std::size_t kCapacity = 4;

  /// Plans for a ph x pw real transform, bound to `stream`; made on first use, the least
  /// recently used size is dropped beyond kCapacity. A convolver keeps the plans it was given
  /// alive after the cache dropped them (a multiscale run uses more sizes than the cache keeps).
  std::shared_ptr<FftPlans> get(cudaStream_t stream, std::size_t pw, std::size_t ph);
  std::size_t plans_made() const { return made_; }
  /// Seconds spent making them (cuFFT's plan creation and the work area), summed.
  double seconds_making() const { return seconds_making_; }

 private:
  std::list<std::shared_ptr<FftPlans>> plans_;  // most recently used first
  std::size_t made_ = 0;
  double seconds_making_ = 0.0;
};

/// Throws cuda::CudaError for allocation failures and std::runtime_error otherwise.
void check_cufft(cufftResult r, const char* what);

}  // namespace gpuclean::clean::gpu

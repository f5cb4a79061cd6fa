#pragma once
// cuFFT C2C plans kept across calls (a plan of 10240² costs tens of ms; an image run inverts
// channel after channel with the same plans). A lease takes a plan out of the pool, so two
// threads never share one; it goes back when the lease ends. The work area is the caller's (it
// is part of the gridder's memory plan).

#include <cufft.h>

#include <cstddef>

namespace gpuclean::imaging::gpu {

/// A batch of in-place transforms: element i of transform b at b·dist + i·stride (rank 1), or
/// `batch` consecutive n1 × n0 grids, n0 contiguous (rank 2; stride and dist unused).
struct FftLayout {
  int rank = 2;
  std::size_t n0 = 0, n1 = 0;
  std::size_t stride = 1, dist = 0;
  std::size_t batch = 1;
  /// `batch` consecutive nu × nv grids ([v][u] row-major).
  static FftLayout grids(std::size_t nu, std::size_t nv, std::size_t batch) { return {2, nu, nv, 1, nu * nv, batch}; }
  /// `count` adjacent columns (length nv, stride nu) of a [v][u] grid.
  static FftLayout columns(std::size_t nu, std::size_t nv, std::size_t count) { return {1, nv, 0, nu, 1, count}; }
  /// `count` consecutive rows (length nu) of a [v][u] grid.
  static FftLayout rows(std::size_t nu, std::size_t count) { return {1, nu, 0, 1, nu, count}; }
  bool operator==(const FftLayout&) const = default;
};

class FftPlanLease {
 public:
  /// A plan for `layout` on the current device.
  explicit FftPlanLease(const FftLayout& layout);
  ~FftPlanLease();
  FftPlanLease(const FftPlanLease&) = delete;
  FftPlanLease& operator=(const FftPlanLease&) = delete;

  const FftLayout& layout() const { return layout_; }
  std::size_t work_bytes() const { return work_bytes_; }
  /// Runs on `stream` with `work` (work_bytes()) as its work area from now on.
  void bind(cudaStream_t stream, void* work);
  /// In place: forward e^{−2πi…} (FFTW_FORWARD), inverse e^{+2πi…}, unnormalised.
  void forward(float2* data);
  void inverse(float2* data);

 private:
  int device_;
  FftLayout layout_;
  cufftHandle handle_ = 0;
  std::size_t work_bytes_ = 0;
};

}  // namespace gpuclean::imaging::gpu

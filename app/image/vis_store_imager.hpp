#pragma once
// The MajorCycleImager of `gpuclean image` on the host's VisStore (major-cycle-plan.md §1 steps
// 4–5): one plane per output channel (Stokes I), images as float for the session.
#include <vector>

#include "app/image/major_cycles.hpp"
#include "imaging/vis_store.hpp"

namespace gpuclean::app {

class VisStoreImager : public MajorCycleImager {
 public:
  /// `store` must outlive the imager.
  explicit VisStoreImager(imaging::VisStore& store) : store_(store) {}
  /// The first inversion: every channel's PSF (its centre then divides every image of the
  /// channel), then its dirty image. Made once; psfs() returns the PSFs made here.
  std::vector<clean::HostImage> dirty() override;
  std::vector<clean::HostImage> psfs() override;
  /// One model per channel; throws clean::InvalidInput for a wrong count or size.
  void predict(const std::vector<clean::HostImage>& models) override;
  std::vector<clean::HostImage> invert_residual() override;

 private:
  void first_inversion();
  imaging::VisStore& store_;
  std::vector<clean::HostImage> dirty_, psfs_;
  bool inverted_ = false;
};

}  // namespace gpuclean::app

#pragma once
// The MajorCycleImager of `gpuclean image` on the host's VisStore (major-cycle-plan.md §1 steps
// 4–5): one plane per output channel (Stokes I), images as float for the session. It may work on
// some of the store's channels only: WSClean 3.1 cleans unjoined output channels one by one, each
// with its own major cycles (clean_groups.hpp). Over several GPUs (the store's lanes) the
// channels of different GPUs are inverted and predicted at once, one thread per lane.
#include <cstddef>
#include <vector>

#include "app/image/major_cycles.hpp"
#include "imaging/vis_store.hpp"

namespace gpuclean::app {

class VisStoreImager : public MajorCycleImager {
 public:
  /// Every channel of `store`, which must outlive the imager.
  explicit VisStoreImager(imaging::VisStore& store);
  /// Only these channels of `store`, in this order (the planes are theirs); throws
  /// clean::InvalidInput for an index the store does not have, or none.
  VisStoreImager(imaging::VisStore& store, std::vector<std::size_t> channels);
  const std::vector<std::size_t>& channels() const { return channels_; }
  /// The first inversion: every channel's PSF (its centre then divides every image of the
  /// channel), then its dirty image. Made once; psfs() returns the PSFs made here.
  std::vector<clean::HostImage> dirty() override;
  std::vector<clean::HostImage> psfs() override;
  /// One model per channel of the imager; throws clean::InvalidInput for a wrong count or size.
  void predict(const std::vector<clean::HostImage>& models) override;
  std::vector<clean::HostImage> invert_residual() override;

 private:
  void first_inversion();
  imaging::VisStore& store_;
  std::vector<std::size_t> channels_;  // the store's channels, one plane each
  std::vector<clean::HostImage> dirty_, psfs_;
  bool inverted_ = false;
};

}  // namespace gpuclean::app

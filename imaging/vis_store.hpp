#pragma once
// The visibilities of `gpuclean image`'s major cycles on the host (major-cycle-plan.md §1 step 3,
// §3): each output channel's samples are made once and kept with their grid plan and a model value
// per sample. It images the data (dirty), the value 1 (PSF) and data − model (residual), each
// divided by Σcw and by the PSF's centre as image_run and WSClean do, and predicts a model image
// into the model values. CPU only; the GPU twin keeps the same samples prepared on the device.
#include <complex>
#include <cstddef>
#include <span>
#include <vector>

#include "imaging/channel_samples.hpp"
#include "imaging/grid_plan.hpp"

namespace gpuclean::imaging {

struct VisStoreSettings {
  ImageGeometry image;    ///< -size, -scale (radians)
  double epsilon = 1e-4;  ///< the gridder's accuracy (WSClean's wgridder default)
  int threads = 0;        ///< ≤ 0: OpenMP's default
};

class VisStore {
 public:
  explicit VisStore(const VisStoreSettings& settings) : settings_(settings) {}

  /// Adds the next output channel: its samples (every cw ≠ 0, as channel_samples makes them) and
  /// Σcw, the first normalisation (WSCIMGWG). The grid plan is chosen over the samples with unit
  /// weights, so predict covers every |w|. Throws clean::InvalidInput when there is no sample.
  void add_channel(ChannelSamples samples, double sum_cw);
  std::size_t channels() const { return channels_.size(); }

  /// The PSF of channel c ÷ Σcw ÷ its centre pixel; the centre is kept and divides every later
  /// image of c (W31:main/wsclean.cpp processFullPSF, imageMainCallback's psfFactor).
  std::vector<double> invert_psf(std::size_t c);
  /// The dirty image of channel c ÷ Σcw ÷ the PSF centre (1 while invert_psf was not called).
  std::vector<double> invert_dirty(std::size_t c) const;
  /// The residual of channel c: data − model values, normalised as invert_dirty. Before any
  /// predict the model values are 0, so it is the dirty image.
  std::vector<double> invert_residual(std::size_t c) const;
  /// Predicts `model` ([y][x], Jy/pixel) into channel c's model values, replacing them (WSClean's
  /// resetModelColumns, then predict). Stored as float, as MODEL_DATA. Throws clean::InvalidInput
  /// for a model of the wrong size.
  void predict(std::size_t c, std::span<const double> model);

  const ChannelSamples& samples(std::size_t c) const { return channels_.at(c).samples; }
  const GridPlan& plan(std::size_t c) const { return channels_.at(c).plan; }
  std::span<const std::complex<float>> model_values(std::size_t c) const { return channels_.at(c).model; }
  double sum_cw(std::size_t c) const { return channels_.at(c).sum_cw; }
  double psf_centre(std::size_t c) const { return channels_.at(c).psf_centre; }

 private:
  struct Channel {
    ChannelSamples samples;
    GridPlan plan;
    std::vector<std::complex<float>> model;
    double sum_cw = 1, psf_centre = 1;
  };
  std::vector<double> invert(const Channel& ch, std::span<const std::complex<float>> values) const;

  VisStoreSettings settings_;
  std::vector<Channel> channels_;
};

}  // namespace gpuclean::imaging

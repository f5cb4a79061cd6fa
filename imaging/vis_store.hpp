#pragma once
// The visibilities of `gpuclean image`'s major cycles on the host (major-cycle-plan.md §1 step 3,
// §3): each output channel's samples are made once and kept with their grid plan and a model value
// per sample. It images the data (dirty), the value 1 (PSF) and data − model (residual), each
// divided by Σcw and by the PSF's centre as image_run and WSClean do, and predicts a model image
// into the model values. The gridding runs on the CPU, or through a VisStoreBackend (the GPU's
// keeps the samples prepared on the device across major cycles: imaging/gpu/vis_store_gpu.hpp).
#include <complex>
#include <cstddef>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "imaging/channel_samples.hpp"
#include "imaging/grid_plan.hpp"

namespace gpuclean::imaging {

struct VisStoreSettings {
  ImageGeometry image;    ///< -size, -scale (radians)
  double epsilon = 1e-4;  ///< the gridder's accuracy (WSClean's wgridder default)
  int threads = 0;        ///< ≤ 0: OpenMP's default
};

/// Which values of a channel's samples an inversion grids.
enum class VisValues { kPsf, kData, kResidual };

/// Where a VisStore grids. Every call gets the channel's plan, its host samples and its host model
/// values; a backend may keep its own copies (the GPU's on the device) and leave the host's
/// model values alone. Images are not divided by anything.
class VisStoreBackend {
 public:
  virtual ~VisStoreBackend() = default;
  /// Called once per channel, in order, right after VisStore::add_channel took it. `plan` and
  /// `samples` stay in place until the store ends, so a backend may finish with them later.
  virtual void add_channel(std::size_t c, const GridPlan& plan, const ChannelSamples& samples) = 0;
  virtual std::vector<double> invert(std::size_t c, const GridPlan& plan, const ChannelSamples& samples,
                                     std::span<const std::complex<float>> host_model, VisValues values) = 0;
  /// Replaces channel c's model values by the prediction of `model`.
  virtual void predict(std::size_t c, const GridPlan& plan, const ChannelSamples& samples,
                       std::span<const double> model, std::vector<std::complex<float>>& host_model) = 0;
  /// One line: where the samples are kept (e.g. "resident on GPU 0: 1.2 GiB").
  virtual std::string describe() const = 0;
  /// Lanes that work at once (one per GPU, vis_store_multi.hpp): calls for channels of different
  /// lanes may come from different threads at the same time, one caller per lane. 1: one caller.
  virtual std::size_t lanes() const { return 1; }
  virtual std::size_t lane_of(std::size_t /*c*/) const { return 0; }
  /// The CUDA device of a lane; −1 when none.
  virtual int lane_gpu(std::size_t /*lane*/) const { return -1; }
};

class VisStore {
 public:
  explicit VisStore(const VisStoreSettings& settings) : settings_(settings) {}
  /// Grids through `backend` from now on (before the first add_channel); none: the CPU.
  void set_backend(std::unique_ptr<VisStoreBackend> backend) { backend_ = std::move(backend); }
  /// The backend's line, or "CPU".
  std::string describe() const { return backend_ ? backend_->describe() : "CPU"; }
  /// The backend's lanes (VisStoreBackend::lanes): channels of different lanes may be inverted
  /// and predicted from different threads at once; the CPU's is one lane.
  std::size_t lanes() const { return backend_ ? backend_->lanes() : 1; }
  std::size_t lane_of(std::size_t c) const { return backend_ ? backend_->lane_of(c) : 0; }
  int lane_gpu(std::size_t lane) const { return backend_ ? backend_->lane_gpu(lane) : -1; }

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
  /// resetModelColumns, then predict). Stored as float, as MODEL_DATA (a backend may keep them on
  /// its device instead, then model_values stays 0). Throws clean::InvalidInput for a model of
  /// the wrong size.
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
  std::vector<double> invert(std::size_t c, VisValues values) const;

  VisStoreSettings settings_;
  std::unique_ptr<VisStoreBackend> backend_;
  std::deque<Channel> channels_;  // a deque: a channel stays in place while later ones are added
};

}  // namespace gpuclean::imaging

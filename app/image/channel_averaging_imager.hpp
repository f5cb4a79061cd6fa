#pragma once
// -deconvolution-channels M with -channels-out N -join-channels (M < N, a spectral fit required):
// N imaging channels, M deconvolution channels, as WSClean 3.1 does it (W31:deconvolution/
// deconvolutiontable.cpp, imageset.cpp, deconvolution.cpp Perform):
// - imaging channel i belongs to deconvolution channel i·M/N (integer division: contiguous groups,
//   the larger ones last, e.g. N 4, M 3: {0, 1}, {2}, {3});
// - a deconvolution channel's dirty/residual and PSF are its channels' means weighted by their
//   image weights (WSCIMGWG; LoadAndAverage, LoadAndAveragePSFs); its weight is their sum and its
//   frequency their weight-weighted mean band centre, the plain mean when the weights add to 0
//   (CalculateDeconvolutionFrequencies): the session's frequencies_hz and weights;
// - after each deconvolution, each model pixel's M values are fitted with the run's spectral fit
//   (the M frequencies and weights) and the fit evaluated at the N band centres; zero pixels stay
//   zero (InterpolateAndStoreModel). Those N models are predicted and the N residuals re-imaged;
// - the deconvolver's M-plane model at the start of each deconvolution is the mean of the stored N
//   models (LoadAndAverage(false)), not its own previous M planes: the model fitted after round k
//   is mean(N models of round k-1) + the components of round k. For a polynomial fit of 1 or 2
//   terms that is the session's model; with more terms, or the logarithmic fit, each round trip
//   moves it a little, and WSClean's is followed here;
// - the residual written per imaging channel: after a prediction, the channel's own re-imaged
//   residual; without one (-mgain 1) its deconvolution channel's residual, the same in every
//   channel of the group (AssignAndStoreResidual; measured: WSClean 3.1's 0000 and 0001 residuals
//   are equal with -mgain 1, differ with -mgain 0.8).
// A channel of weight 0 adds nothing to any mean; a deconvolution channel of weight 0 has a NaN
// residual (WSClean's 0/0, which the session leaves out as flagged), a zero PSF and is left out
// of the interpolation's fit.
#include <cstddef>
#include <optional>
#include <vector>

#include "app/image/major_cycles.hpp"
#include "clean/clean_settings.hpp"
#include "clean/host_image.hpp"
#include "clean/spectral_fit.hpp"

namespace gpuclean::app {

/// WSClean's grouping: the deconvolution channel of each of `n` imaging channels when `m` are
/// deconvolved (m 0 or above n: n, as DeconvolutionTable clamps it).
std::vector<std::size_t> deconvolution_channel_of(std::size_t n, std::size_t m);

class ChannelAveragingImager : public MajorCycleImager {
 public:
  /// `inner` images the N channels (it must outlive this); `frequencies_hz` their band centres and
  /// `weights` their image weights (WSCIMGWG), N each; `fit` the run's -fit-spectral(-log)-pol.
  /// Throws clean::InvalidInput for counts that disagree, clean::InvalidSettings when `fit` has no
  /// terms while M < N, or more terms than the deconvolution channels with weight.
  ChannelAveragingImager(MajorCycleImager& inner, std::vector<double> frequencies_hz, std::vector<double> weights,
                         std::size_t deconvolution_channels, clean::SpectralFitSettings fit);

  std::size_t channels() const { return group_.size(); }  ///< N
  std::size_t planes() const { return frequencies_.size(); }  ///< M
  /// The M deconvolution channels' frequencies and weights (OuterLoopInput's).
  const std::vector<double>& frequencies_hz() const { return frequencies_; }
  const std::vector<double>& weights() const { return plane_weights_; }
  /// The deconvolution channel of each imaging channel.
  const std::vector<std::size_t>& group_of() const { return group_; }

  /// M planes: the inner first inversion averaged.
  std::vector<clean::HostImage> dirty() override;
  std::vector<clean::HostImage> psfs() override;
  /// M models → N (the rule above), predicted by the inner imager. Throws clean::InvalidInput for a
  /// count other than M or a wrong size.
  void predict(const std::vector<clean::HostImage>& models) override;
  /// The inner N residuals (kept for the outputs), averaged to M.
  std::vector<clean::HostImage> invert_residual() override;

  /// N images → M weighted means (LoadAndAverage); NaN in a plane of weight 0.
  std::vector<clean::HostImage> average(const std::vector<clean::HostImage>& channel_images) const;
  /// M models → N: each pixel's fit evaluated at the N frequencies (InterpolateAndStoreModel).
  std::vector<clean::HostImage> interpolate(const std::vector<clean::HostImage>& plane_models) const;

  /// What WSClean writes per imaging channel at the end, from the session's final M models and
  /// residuals: the N models (those last predicted when `models` are the ones predicted, else
  /// one more interpolation step, as WSClean's last Perform without a prediction), and the N
  /// residuals (the inner ones re-imaged after that prediction, else each group's M residual).
  /// With -mgain 1 and -auto-mask's second round WSClean interpolates once per round, here once
  /// at the end: the same models for a polynomial fit of 1 or 2 terms.
  struct ChannelImages {
    std::vector<clean::HostImage> models, residuals;
  };
  ChannelImages channel_outputs(const std::vector<clean::HostImage>& models,
                                const std::vector<clean::HostImage>& residuals);

 private:
  void check_planes(const std::vector<clean::HostImage>& images, std::size_t count, const char* what) const;
  /// WSClean's model bookkeeping for a round that ended with the session's `models`.
  void store_models(const std::vector<clean::HostImage>& models);

  MajorCycleImager& inner_;
  std::vector<double> channel_frequencies_, channel_weights_;  // N
  std::vector<std::size_t> group_;                             // N → M
  std::vector<double> frequencies_, plane_weights_;            // M
  std::vector<std::size_t> fitted_planes_;                     // the planes of weight > 0
  std::optional<clean::SpectralFit> fit_;                      // over fitted_planes_; none when M == N
  std::vector<clean::HostImage> session_models_;   // the M models of the last stored round
  std::vector<clean::HostImage> channel_models_;   // N, WSClean's stored models
  std::vector<clean::HostImage> channel_residuals_;  // N, the last re-imaged
  std::size_t width_ = 0, height_ = 0;               // the first inversion's (0: not made yet)
  bool stored_ = false, residuals_current_ = false;
};

}  // namespace gpuclean::app

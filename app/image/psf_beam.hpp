#pragma once
// The restoring beam WSClean writes for a PSF (W31:math/imageoperations.cpp DetermineBeamSize,
// FitBeamSize; schaapcommon gaussianfitter.cc Fit2DGaussianCentred): a Gaussian fitted in a box
// 10 × the initial estimate, the box grown (up to 5 times) while the fitted beam does not fit it;
// each fit WSClean's own (clean/beam.hpp fit_psf_beam_wsclean_box: GSL's lmsder, step by step).
#include <vector>

#include "app/image/image_args.hpp"
#include "imaging/image_run.hpp"
#include "io/fits_writer.hpp"

namespace gpuclean::app {

/// `initial_rad`: WSClean's estimate, max(theoretic beam, smallest pixel scale, taper FWHM);
/// `beam`: -beam-fitting-size (the box in estimates), -circular-beam, -fit-beam-without-negatives.
/// BMAJ/BMIN/BPA in degrees (BPA as WSClean writes it, in (−180°, 180°]); zeros for an empty `psf`
/// (no -make-psf), as WSClean writes.
io::BeamKeywords fit_wsclean_beam(const std::vector<double>& psf, const imaging::ImageGeometry& image,
                                  double initial_rad, const RestoringBeamOptions& beam = {});

/// The estimate for one channel (or the MFS) as WSClean forms it.
double initial_beam_estimate(const imaging::ChannelImage& c, const imaging::ImageGeometry& image,
                             double taper_fwhm_rad);

/// The beam a channel's (or the MFS's) files carry and its image is restored with (WSClean 3.1
/// DetermineBeamSize): -beam-size or -beam-shape when given (on every file), else the fit to its
/// PSF, else with -theoretic-beam a circular beam of the estimate; zeros without any.
io::BeamKeywords channel_beam(const ImageOptions& options, const imaging::ChannelImage& c);

}  // namespace gpuclean::app

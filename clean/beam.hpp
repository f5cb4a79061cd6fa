#pragma once
// Restoring beam: an elliptical Gaussian fitted to the PSF main lobe, and its conversion between
// the pixel grid and the sky (BMAJ/BMIN in arcsec, BPA in degrees north through east).

#include <cstddef>

#include "clean/host_image.hpp"
#include "clean/psf.hpp"

namespace gpuclean::clean {

/// exp(-0.5 d^T C^-1 d) with covariance C in pixel^2 (d = (dx, dy), x along FITS axis 1).
struct PixelGaussian {
  double cxx = 1.0;
  double cxy = 0.0;
  double cyy = 1.0;
  double value(double dx, double dy) const;
  /// FWHM along the major and minor axes [pixels].
  double fwhm_major_pixels() const;
  double fwhm_minor_pixels() const;
};

/// A beam on the sky: FWHM in arcsec and position angle in degrees, in [0, 180).
struct SkyBeam {
  double bmaj_arcsec = 0.0;
  double bmin_arcsec = 0.0;
  double bpa_deg = 0.0;
};

/// Pixel offset -> sky offset [deg]: row 0 east (increasing RA), row 1 north.
struct PixelToSky {
  double m[2][2] = {{1.0 / 3600.0, 0.0}, {0.0, 1.0 / 3600.0}};
};

enum class BeamFit {
  /// WSClean: least squares over every pixel of a box 10 x the estimated FWHM around the peak.
  kWsclean,
  /// CASA (tclean psfcutoff): least squares over the main-lobe pixels connected to the peak
  /// whose value is at least 0.35.
  kCasa,
};

/// Fits an elliptical Gaussian to the PSF main lobe, with the amplitude fixed at 1 and the centre
/// at the peak (Levenberg-Marquardt). Throws InvalidInput when the main lobe is too small.
PixelGaussian fit_psf_beam(const PreparedPsf& psf, BeamFit method = BeamFit::kWsclean);

/// WSClean's restoring beam in pixels: FWHMs along the axes and the position angle [rad] as WSClean
/// writes it (BPA = this in degrees): −atan2(vx, vy) of the major axis (vx, vy) in pixels (x along
/// FITS axis 1, y along axis 2), which lies in (−π, π] and is 0 for an axis along +y (north).
struct WscleanEllipse {
  double major = 0.0;
  double minor = 0.0;
  double position_angle = 0.0;
};

/// WSClean 3.1's fit in a box_width × box_height box around the image's centre (W/2, H/2)
/// (schaapcommon gaussianfitter.cc Fit2DGaussianCentredInBox): the Gaussian
/// exp(−x²/2σx² + β xy/σxσy − y²/2σy²) (amplitude 1, centred), fitted by GSL's lmsder as WSClean
/// runs it (clean/beam_lmsder.hpp) from σx = σy = initial_fwhm_pixels, β = 0, with WSClean's
/// Jacobian (its β terms of ∂/∂σx, ∂/∂σy have the wrong sign: the path, not the minimum, changes),
/// and stopped as WSClean stops it (steps below 1e-7 + 1e-7 relative, or 500 iterations).
/// Only the box's quadrant dx, dy ≥ 0 is fitted: WSClean's model evaluates (xi − x_mid) in size_t,
/// so every pixel left of or below the centre sees a model of 0 and adds a constant. The quadrant
/// alone leaves the fit near-degenerate on elongated PSFs (it does not bound the extent towards
/// dx < 0 < dy, and β may end beyond ±1): where it ends depends on the solver's path, which is why
/// the solver is GSL's own, step by step. skip_negatives: WSClean 3.7's -fit-beam-without-negatives
/// (negative pixels count as fitted exactly).
WscleanEllipse fit_psf_beam_wsclean_box(const HostImage& psf, std::size_t box_width, std::size_t box_height,
                                        double initial_fwhm_pixels, bool skip_negatives = false);

/// WSClean's -circular-beam fit in the same box (schaapcommon Fit2DCircularGaussianCentredInBox):
/// one σ, amplitude 1, centred, fitted to the same quadrant (the same size_t wrap-around) by the
/// same solver, from initial_fwhm_pixels. Returns the FWHM in pixels.
double fit_psf_beam_wsclean_circular(const HostImage& psf, std::size_t box_width, std::size_t box_height,
                                     double initial_fwhm_pixels);
SkyBeam to_sky(const PixelGaussian& g, const PixelToSky& t);
PixelGaussian from_sky(const SkyBeam& b, const PixelToSky& t);

/// The Gaussian sampled on an odd-sized grid (peak 1 at the centre) that reaches 1e-6 of the
/// peak, cropped to at most max_width x max_height.
HostImage gaussian_kernel(const PixelGaussian& g, std::size_t max_width, std::size_t max_height);

/// gaussian_kernel()'s half sizes: its grid is (2 half_width + 1) x (2 half_height + 1).
struct KernelHalfSize {
  std::size_t half_width = 0, half_height = 0;
};
KernelHalfSize gaussian_kernel_half_size(const PixelGaussian& g, std::size_t max_width, std::size_t max_height);

}  // namespace gpuclean::clean

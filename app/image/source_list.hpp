#pragma once
// `gpuclean image -save-source-list`: NAME-sources.txt as WSClean 3.1 writes it
// (W31:deconvolution/componentlist.cpp, model/writemodel.h; measured on its own runs):
//   Format = Name, Type, Ra, Dec, I, SpectralIndex, LogarithmicSI, ReferenceFrequency='F', MajorAxis,
//   MinorAxis, Orientation
//   s0c0,POINT,03:32:13.899,-28.02.39.956,0.0196604449301958,[],false,1284000030.67142,,,
// One line per non-zero model pixel in raster order (y, then x), named s<scale>c<index>; I and
// the spectral terms are floats and every number has 15 significant digits; RA hh:mm:ss.sss and
// Dec dd.mm.ss.sss rounded to a millisecond / milliarcsecond with trailing zeros dropped. With
// several joined output channels the pixel's spectrum over the channels' models is fitted as
// -fit-spectral-pol / -fit-spectral-log-pol asks (WSClean refuses the list without a fit).
// Multiscale: one line per pixel and scale from the run's components, GAUSSIAN above scale 0.
#include <string>
#include <vector>

#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"

namespace gpuclean::app {

/// The sky the model images are on: SIN projection, the reference pixel at (width/2, height/2)
/// (0-based), RA increasing to the left, as the images' headers say.
struct SourceListSky {
  std::size_t width = 0, height = 0;
  double scale_rad = 0;             ///< pixel size
  double ra_rad = 0, dec_rad = 0;   ///< phase centre
};

/// One output channel: its final model (Jy/pixel, row-major), band centre and weight (WSCIMGWG).
struct SourceListChannel {
  const std::vector<double>* model = nullptr;
  double frequency_hz = 0, weight = 0;
};

/// WSClean's ReferenceFrequency: the channels' weighted mean frequency with the weights summed in
/// float (W31 ImageSet::CalculateDeconvolutionFrequencies, then the spectral fitter's mean).
double wsclean_reference_frequency(const std::vector<SourceListChannel>& channels);

/// aocommon's RaDecCoord::RAToString(ra, ':') and DecToString(dec, '.').
std::string wsclean_ra_text(long double ra_rad);
std::string wsclean_dec_text(long double dec_rad);

/// WSClean 3.1's refusals, checked before any work (clean::InvalidSettings, exit 2): Stokes I
/// only, and several channels cleaned together (`channels`: -channels-out when joined, else 1)
/// only with a spectral fit.
void check_source_list(const clean::CleanSettings& settings, std::size_t channels, bool stokes_i);

/// The planes a run cleaned when they are not the output channels (-deconvolution-channels):
/// their frequencies and weights, whose fluxes the components carry.
struct SourceListPlanes {
  std::vector<double> frequencies_hz, weights;
};

/// The text of NAME-sources.txt. `components`: the run's components, used for multiscale only
/// (null otherwise); `cleaned`: their planes when not the output channels (null: they are).
/// Throws clean::InvalidSettings for several channels without a spectral fit.
std::string wsclean_source_list(const std::vector<SourceListChannel>& channels, const SourceListSky& sky,
                                const clean::CleanSettings& settings, const clean::CleanResult* components,
                                const SourceListPlanes* cleaned = nullptr);

}  // namespace gpuclean::app

#pragma once
// The model images `gpuclean image -predict` reads, named as WSClean names them
// (W31:io/imagefilename.h): NAME-model.fits, or NAME-000c-model.fits with -channels-out > 1.
// Each must match the run before any MS is written (one line, exit 3 otherwise):
// - its size: -size, or the first model's when -size is absent (WSClean takes it from the file);
// - its pixel scale (−CDELT1, CDELT2): within WSClean's tolerance, |Δ|·size ≤ 0.1 pixel; -scale, or
//   the first model's when -scale is absent;
// - its phase centre, which WSClean does not check: CRVAL1/2 on the MS's phase centre and CRPIX1/2
//   on the pixel the gridder puts there (W/2 + 1, H/2 + 1), to 0.01 pixel (keys absent: not checked);
// - finite pixels (WSClean refuses NaN and infinities too).
#include <string>
#include <vector>

#include "imaging/grid_plan.hpp"
#include "io/ms/ms_selection.hpp"

namespace gpuclean::app {

std::string model_path(const std::string& name, std::size_t channel, std::size_t channels_out);

/// Before any MS is opened: every model of the run exists, is FITS and has the run's size and
/// pixel scale (the header only; a zero field of `image` is taken from the first model). Throws as
/// check_models; returns the geometry.
imaging::ImageGeometry check_model_files(const std::string& name, std::size_t channels_out,
                                         imaging::ImageGeometry image);

/// Checks every model of the run (`channels_out` of them) against `image` and the phase centre
/// of `selection`; a zero width/height or scale in `image` is taken from the first model. Returns
/// the geometry to predict with. Throws io::FitsError (missing or unreadable file) or
/// clean::InvalidInput (a mismatch, non-finite pixels).
imaging::ImageGeometry check_models(const std::string& name, std::size_t channels_out, imaging::ImageGeometry image,
                                    const io::ms::MsSelection& selection);

/// Model `channel` as row-major [y][x] doubles (Jy/pixel), checked as check_models does.
std::vector<double> read_model(const std::string& name, std::size_t channel, std::size_t channels_out,
                               const imaging::ImageGeometry& image, const io::ms::MsSelection& selection);

}  // namespace gpuclean::app

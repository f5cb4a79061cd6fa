// WSClean's restoring-beam options and its model-drawing and restore modes (W37 lists them under
// SKY MODEL DRAWING OPTIONS, W31 under RESTORATION OPTIONS).
#include "app/wsclean/wsclean_rows.hpp"

#include <cmath>

#include "app/wsclean/wsclean_angle.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app::wsclean_rows {
namespace v = wsclean_value;

namespace {

constexpr double kRadToArcsec = 180.0 / M_PI * 3600.0;
constexpr double kRadToDeg = 180.0 / M_PI;

clean::CleanSettings& s(ImageOptions& o) { return o.deconvolution.settings; }

}  // namespace

void restore_rows(std::vector<WscleanOption>& rows) {
  const std::string drawing = "WSClean's model-drawing mode; gpuclean image images MeasurementSets";
  add(rows, "RESTORING BEAM AND SKY MODEL DRAWING OPTIONS",
      {
          refused("draw-model", 1, "<sky model>", "Draw a BBS/DP3 sky model into a FITS image (3.7).", drawing),
          refused("draw-centre", 2, "<ra> <dec>", "The drawn model's phase centre (3.7).", drawing),
          refused("draw-frequencies", 2, "<centre> <bandwidth>", "The drawn model's band (3.7).", drawing),
          refused("sinc-window-size", 1, "<pixels>", "The drawing's sinc window (3.7).", drawing),
          refused("draw-spectral-terms", 1, "<count>", "The drawn model's spectral terms (3.7).", drawing),
          refused("restore", 3, "<residual> <model> <output>", "Restore a model image onto a residual image.",
                  "WSClean's restore mode; gpuclean image restores its own images (and `gpuclean` restores a "
                  "dirty image and PSF it cleans)"),
          refused("restore-list", 3, "<residual> <source list> <output>", "Restore a source list onto a residual image.",
                  "WSClean's restore mode; gpuclean image restores its own images"),
          yes("beam-size,beamsize", 1, "<angle>", "A circular restoring beam of this FWHM (arcseconds unless a unit).",
              [](ImageOptions& o, const GivenOption& g) {
                const double fwhm = parse_wsclean_angle(g.values[0], g.option, AngleUnit::kArcseconds) * kRadToArcsec;
                if (!(fwhm > 0)) throw clean::InvalidSettings(g.option + " " + g.values[0] + " must be positive");
                s(o).beam_shape = clean::BeamShape{fwhm, fwhm, 0.0};
              }),
          yes("beam-shape,beamshape", 3, "<major> <minor> <pa>",
              "The restoring beam (arcseconds, arcseconds, degrees unless units are given).",
              [](ImageOptions& o, const GivenOption& g) {
                const double maj = parse_wsclean_angle(g.values[0], g.option, AngleUnit::kArcseconds) * kRadToArcsec;
                const double min = parse_wsclean_angle(g.values[1], g.option, AngleUnit::kArcseconds) * kRadToArcsec;
                const double pa = parse_wsclean_angle(g.values[2], g.option, AngleUnit::kDegrees) * kRadToDeg;
                if (!(maj > 0 && min > 0))
                  throw clean::InvalidSettings(g.option + " " + g.values[0] + " " + g.values[1] +
                                               ": the axes must be positive");
                s(o).beam_shape = clean::BeamShape{maj, min, pa};
              }),
          yes("fit-beam,fitbeam", 0, "", "Fit the restoring beam to the PSF (the default).",
              [](ImageOptions& o, const GivenOption&) { o.beam.fit = true; }),
          yes("no-fit-beam,nofitbeam", 0, "", "Do not fit the PSF: restore with the theoretical beam.",
              [](ImageOptions& o, const GivenOption&) { o.beam.fit = false; }),
          yes("beam-fitting-size", 1, "<factor>", "The fit's box in theoretical beams (default 10).",
              [](ImageOptions& o, const GivenOption& g) { o.beam.fitting_size = v::at_least(g, 0, true); }),
          yes("theoretic-beam,theoreticbeam", 0, "",
              "Restore with the beam of the longest projected baseline instead of a fit.",
              [](ImageOptions& o, const GivenOption&) { o.beam.fit = false, o.beam.theoretic = true; }),
          yes("circular-beam,circularbeam", 0, "", "Fit a circular restoring beam.",
              [](ImageOptions& o, const GivenOption&) { o.beam.circular = true; }),
          yes("elliptical-beam,ellipticalbeam", 0, "", "Fit an elliptical restoring beam (the default).",
              [](ImageOptions& o, const GivenOption&) { o.beam.circular = false; }),
          yes("fit-beam-with-negatives", 0, "", "The PSF's negative values count in the beam fit (3.7's default).",
              [](ImageOptions& o, const GivenOption&) { o.beam.with_negatives = true; }),
          yes("fit-beam-without-negatives", 0, "", "The PSF's negative values are left out of the beam fit (3.7).",
              [](ImageOptions& o, const GivenOption&) { o.beam.with_negatives = false; }),
      });
}

}  // namespace gpuclean::app::wsclean_rows

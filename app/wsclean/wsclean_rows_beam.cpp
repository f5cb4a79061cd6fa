// WSClean's primary-beam options (GENERAL OPTIONS in its -help), A-TERM GRIDDING and the
// direction-dependent facet options: the primary beam of dish arrays is applied (beam/); a-terms
// and facet solutions (direction-dependent corrections through IDG and EveryBeam) are not offered.
#include "app/wsclean/wsclean_rows.hpp"

#include "clean/errors.hpp"

namespace gpuclean::app::wsclean_rows {
namespace v = wsclean_value;

void beam_rows(std::vector<WscleanOption>& rows) {
  const std::string pb = "not supported yet: primary-beam correction is planned for gpuclean image (dish arrays); "
                         "leave it out and correct the images afterwards";
  const std::string dd = "gpuclean images without direction-dependent corrections (a-terms, facet solutions; "
                         "WSClean applies them through IDG and EveryBeam)";
  const std::string aperture = "not supported yet: gpuclean corrects dish arrays only (MeerKAT, VLA, ATCA, GMRT, "
                               "ASKAP); aperture arrays (LOFAR, MWA, SKA-Low) need EveryBeam, which Debian does not "
                               "package";
  add(rows, "PRIMARY BEAM OPTIONS",
      {
          yes("apply-primary-beam", 0, "", "Compute and apply the primary beam (EveryBeam's telescopes).",
              [](ImageOptions& o, const GivenOption&) { o.primary_beam.apply = true; },
              "dish arrays (MeerKAT, VLA, ATCA, GMRT as EveryBeam evaluates them; ASKAP's Gaussian): "
              "NAME-beam-k.fits and NAME-image-pb.fits (residual-pb, model-pb with -niter), docs/primary-beam.md; "
              "aperture arrays are refused"),
          mapped("reuse-primary-beam", 0, "", "Reuse primary-beam images found on disk.",
                 "gpuclean evaluates the dish beam at every pixel each run (it costs little), so nothing is reused"),
          not_yet("use-differential-lofar-beam", 0, "", "LOFAR: the data are corrected for the beam's centre.",
                  aperture),
          yes("primary-beam-limit", 1, "<level>", "Trim the primary beam below this level (default 0.005).",
              [](ImageOptions& o, const GivenOption& g) { o.primary_beam.limit = v::at_least(g, 0); },
              "WSClean 3.7's rule: NaN where the power beam is at or below it (3.1 cut at half of it)"),
          not_yet("beam-model", 1, "<model>", "EveryBeam's beam model (LOFAR, SKA).", aperture),
          not_yet("beam-mode", 1, "<mode>", "EveryBeam's beam mode (debugging).", aperture),
          not_yet("beam-normalisation-mode", 1, "<mode>", "EveryBeam's beam normalisation (debugging).", aperture),
          not_yet("mwa-path", 1, "<directory>", "Where the MWA beam files are.", aperture),
          not_yet("save-psf-pb", 0, "", "Also write the primary-beam corrected PSF.", pb),
          mapped("pb-grid-size", 1, "<pixels>", "The grid the primary beam is evaluated on (default 32).",
                 "gpuclean evaluates the beam exactly at every pixel (no coarse grid to resample)"),
          yes("dd-psf-grid", 2, "<columns> <rows>", "Direction-dependent PSFs on this grid (default 1 1: none).",
              [](ImageOptions&, const GivenOption& g) {
                if (v::count(g, 1, 0) != 1 || v::count(g, 1, 1) != 1)
                  throw clean::InvalidSettings(g.option + " " + g.values[0] + " " + g.values[1] +
                                               " is not offered: gpuclean makes one PSF per output channel (give 1 1 "
                                               "or leave it out)");
              },
              "1 1 only: one PSF per output channel"),
      });
  add(rows, "A-TERM GRIDDING",
      {
          refused("aterm-config", 1, "<file>", "Apply a-terms from this configuration (IDG).", dd),
          not_yet("grid-with-beam", 0, "", "Apply the primary beam as an a-term while gridding (IDG).", pb),
          mapped("beam-aterm-update", 1, "<seconds>", "How often the beam a-term (and -apply-primary-beam's beam) is "
                 "evaluated (default 300).",
                 "a dish's beam does not change in time (EveryBeam evaluates it once for dishes too), so no interval "
                 "applies"),
          refused("aterm-kernel-size", 1, "<pixels>", "IDG's kernel size for a-terms.", dd),
          refused("apply-facet-solutions", 2, "<h5parm> <names>", "Apply per-facet solutions from an H5Parm file.", dd),
          refused("no-solution-directions-check", 0, "", "Skip the check of solution directions against facets.", dd),
          mapped("scalar-visibilities", 0, "", "Read one polarization only (with scalar solutions, faster).",
                 "gpuclean reads the correlations of the product it images, nothing more"),
          refused("diagonal-visibilities,diagonal-solutions", 0, "",
                  "Read XX and YY and apply solutions to them separately.", dd),
          refused("apply-facet-beam", 0, "", "Apply the beam at each facet's centre.", dd),
          refused("apply-time-frequency-smearing", 0, "",
                  "Model time and frequency smearing in the PSF and the prediction (3.7).",
                  "not supported yet: gpuclean grids each visibility at its own time and frequency"),
          refused("facet-beam-update", 1, "<seconds>", "How often the facets' beam is evaluated.", dd),
          refused("save-aterms", 0, "", "Write the a-terms as FITS images.", dd),
      });
}

}  // namespace gpuclean::app::wsclean_rows

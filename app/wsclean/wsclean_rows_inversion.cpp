// WSClean's INVERSION OPTIONS and GRIDDER-SPECIFIC SETTINGS (W37:main/commandline.cpp). gpuclean
// grids with its own w-stacking gridder (an ES kernel, WSClean's -gridder wgridder method, on the
// GPU): the other gridders' options become the accuracy they stand for, said once.
#include "app/wsclean/wsclean_rows.hpp"

#include "app/wsclean/wsclean_angle.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app::wsclean_rows {
namespace v = wsclean_value;

namespace {

ImageApply gridder(const std::string& name) {
  return [name](ImageOptions& o, const GivenOption&) { o.gridder = name; };
}

}  // namespace

void inversion_rows(std::vector<WscleanOption>& rows) {
  const std::string wstacking =
      "WSClean's w-stacking gridder's kernel and w-layers; gpuclean's gridder chooses its kernel (support and "
      "oversampling from ducc0's table) and w-planes for its accuracy (1e-4, or -wgridder-accuracy)";
  const std::string no_facets = "gpuclean images without facets, so there is nothing to schedule";
  add(rows, "INVERSION OPTIONS",
      {
          yes("predict", 0, "", "Predict model visibilities from NAME[-000c]-model.fits into the model column; no imaging.",
              [](ImageOptions& o, const GivenOption&) { o.predict = true; }),
          refused("predict-channels", 1, "<count>", "WSClean 3.1's undocumented channel count of -predict.",
                  "gone from WSClean 3.7; give -channels-out"),
          refused("continue", 0, "", "Continue an earlier run: its NAME[-000c]-model.fits is the start model.",
                  "not supported yet: start a new run (with -subtract-model to image what an earlier model left)"),
          yes("subtract-model", 0, "", "Subtract the model column from the data before imaging.",
              [](ImageOptions& o, const GivenOption&) { o.selection.subtract_model = true; }),
          yes("size", 2, "<width> <height>", "The image size in pixels.",
              [](ImageOptions& o, const GivenOption& g) {
                o.run.image.width = v::count(g, 2, 0);
                o.run.image.height = v::count(g, 2, 1);
              }),
          yes("padding", 1, "<factor>", "Pad the images by this factor while inverting (default 1.2).",
              [](ImageOptions& o, const GivenOption& g) { o.run.padding = v::at_least(g, 1); },
              "sizes the uniform/Briggs weight grid as WSClean's padded image; gpuclean's gridder inverts at the full "
              "size with its own oversampling, so no aliasing to pad against"),
          yes("scale", 1, "<angle>", "The pixel size (degrees unless a unit is given: 1.1asec, 0.1amin).",
              [](ImageOptions& o, const GivenOption& g) {
                o.run.image.scale = parse_wsclean_angle(g.values[0], g.option, AngleUnit::kDegrees);
                if (!(o.run.image.scale > 0)) throw clean::InvalidSettings(g.option + " must be positive");
              }),
          yes("name", 1, "<prefix>", "The prefix of the output files (default wsclean).",
              [](ImageOptions& o, const GivenOption& g) {
                if (g.values[0].empty()) throw clean::InvalidSettings(g.option + " must not be empty");
                o.name = g.values[0];
              }),
          yes("make-psf", 0, "", "Make the PSF even without cleaning.",
              [](ImageOptions& o, const GivenOption&) { o.run.make_psf = true; }),
          yes("make-psf-only", 0, "", "Only make the PSF.",
              [](ImageOptions& o, const GivenOption&) { o.make_psf_only = o.run.make_psf = true; }),
          yes("skip-final-iteration", 0, "",
              "After the last deconvolution, skip the prediction and re-imaging (WSClean 3.7).",
              [](ImageOptions& o, const GivenOption&) { o.deconvolution.skip_final_iteration = true; }),
          mapped("min-grid-resolution,small-inversion,smallinversion", 0, "",
                 "Invert at the Nyquist resolution and resample (WSClean's default).",
                 "gpuclean always inverts at the full resolution, which keeps its accuracy to the field's edge"),
          yes("no-min-grid-resolution,no-small-inversion,nosmallinversion", 0, "",
              "Invert at the full resolution.", [](ImageOptions&, const GivenOption&) {},
              "what gpuclean always does"),
          refused("shift", 2, "<ra> <dec>", "Shift the phase centre along the tangent plane.",
                  "gpuclean images at the MS's phase centre; rephase the MS first (DP3's phaseshift step or "
                  "chgcentre)"),
          yes("channels-out,channelsout", 1, "<count>",
              "Output channels: WSClean's division into equal numbers of channels, plus MFS images.",
              [](ImageOptions& o, const GivenOption& g) { o.run.channels_out = v::count(g, 1); }),
          refused("gap-channel-division", 0, "", "Divide irregularly spaced channels at their largest gaps first.",
                  "not supported yet: gpuclean divides the channels as WSClean does without it (give "
                  "-channel-division-frequencies to split at chosen frequencies)"),
          yes("channel-division-frequencies", 1, "<list>",
              "Split the band at these frequencies (Hz) before dividing it into -channels-out outputs.",
              [](ImageOptions& o, const GivenOption& g) { o.run.channel_division_hz = v::numbers(g); }),
          refused("facet-regions", 1, "<file>", "Image in facets from a DS9 region file.",
                  "gpuclean images without facets (no direction-dependent corrections)"),
          refused("feather-size", 1, "<pixels>", "Feathering of the facets' boundaries.",
                  "gpuclean images without facets (no direction-dependent corrections)"),
          mapped("baseline-averaging", 1, "<wavelengths>", "Baseline-dependent averaging in time, up to this size.",
                 "gpuclean grids every visibility at its own time (exact), so its images are those without "
                 "averaging's smearing",
                 [](ImageOptions& o, const GivenOption& g) {
                   v::at_least(g, 0, true);  // WSClean 3.1 and 3.7 refuse 0
                   note(o, g,
                        "gpuclean grids every visibility at its own time (exact, without averaging's smearing)");
                 }),
          refused("simulate-noise", 1, "<stddev>", "Replace the visibilities by Gaussian noise.",
                  "gpuclean images the data as they are; simulate with data/simulate_ms.py"),
          refused("simulate-baseline-noise", 1, "<file>", "Replace the visibilities by noise given per baseline.",
                  "gpuclean images the data as they are; simulate with data/simulate_ms.py"),
          yes("visibility-weighting-mode", 1, "normal|squared|unit",
              "How the visibility weights are used: as they are, squared, or 1 for every unflagged one.",
              [](ImageOptions&, const GivenOption& g) {
                std::string m = g.values[0];
                for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                if (v::choice(GivenOption{g.option, {m}}, {"normal", "squared", "unit"}) != "normal")
                  throw clean::InvalidSettings(g.option + " " + g.values[0] +
                                               " is not supported yet: gpuclean grids with the visibility weights "
                                               "as they are (normal)");
              },
              "normal only"),
          mapped("gridder", 1, "<type>", "The gridder: wgridder (3.7's default), tuned-wgridder, wstacking, "
                 "direct-ft, idg, facet-idg or wtowers.",
                 "gpuclean's own gridder (w-stacking with an ES kernel on the GPU) at the accuracy the choice stands "
                 "for: 1e-4 (or -wgridder-accuracy), 1e-5 for direct-ft",
                 [](ImageOptions& o, const GivenOption& g) {
                   o.gridder = v::choice(g, {"wgridder", "tuned-wgridder", "wstacking", "direct-ft", "idg",
                                             "facet-idg", "wtowers"});
                 }),
          mapped("use-wgridder", 0, "", "WSClean 3.1's switch to the wgridder (3.7: -gridder wgridder).",
                 "as -gridder wgridder", gridder("wgridder")),
          mapped("use-idg", 0, "", "WSClean 3.1's switch to IDG (3.7: -gridder idg).", "as -gridder idg", gridder("idg")),
          mapped("direct-ft", 0, "", "A direct Fourier transform (3.7: -gridder direct-ft).", "as -gridder direct-ft",
                 gridder("direct-ft")),
          mapped("direct-ft-precision", 1, "float|double", "The direct transform's arithmetic.",
                 "gpuclean's gridder works in double coordinates and phases with a float grid at its accuracy",
                 [](ImageOptions& o, const GivenOption& g) {
                   v::choice(g, {"float", "double"});
                   note(o, g, "gpuclean's gridder: double coordinates and phases, a float grid");
                 }),
          mapped("idg-mode", 1, "cpu|gpu|hybrid", "Where IDG runs.",
                 "gpuclean's gridder runs on the GPU when there is one (-device)",
                 [](ImageOptions& o, const GivenOption& g) {
                   std::string m = g.values[0];
                   for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                   v::choice(GivenOption{g.option, {m}}, {"cpu", "gpu", "hybrid"});
                   note(o, g, "gpuclean's gridder runs on the GPU when there is one (-device)");
                 }),
          refused("maxw", 1, "<percentage>", "Do not grid visibilities above this percentage of the largest w.",
                  "an experiment of WSClean's (Tasse et al. 2013, App. C) that drops data; gpuclean grids every w"),
          mapped("compound-tasks", 0, "", "Schedule all facets of an image as one gridding task.", no_facets),
          mapped("shared-facet-reads", 0, "", "Read the data once for all facets of a task.", no_facets),
          mapped("shared-facet-writes", 0, "", "Sum the facets' predictions before writing them.", no_facets),
      });
  add(rows, "GRIDDER-SPECIFIC SETTINGS",
      {
          yes("wgridder-accuracy", 1, "<accuracy>", "The wgridder's accuracy (default 1e-4; 1e-2 to 1e-6).",
              [](ImageOptions& o, const GivenOption& g) { o.gridder_accuracy = v::at_least(g, 0, true); },
              "gpuclean's gridder at this accuracy; from 1e-5 (its float grid's floor) to 1e-1"),
          mapped("wtowers-accuracy", 1, "<accuracy>", "The w-towers gridder's accuracy.",
                 "as -wgridder-accuracy",
                 [](ImageOptions& o, const GivenOption& g) { o.gridder_accuracy = v::at_least(g, 0, true); }),
          mapped("wtowers-subgrid-size", 1, "<pixels>", "The w-towers subgrid size.", wstacking),
          mapped("wtowers-support", 1, "<pixels>", "The w-towers kernel size.", wstacking),
          mapped("wtowers-w-support", 1, "<pixels>", "The w-towers w-kernel size.", wstacking),
          mapped("wtowers-padding", 1, "<factor>", "The w-towers padding.", wstacking),
          mapped("wtowers-w-padding", 1, "<factor>", "The w-towers w-padding.", wstacking),
          mapped("wstack-nwlayers,nwlayers", 1, "<count>", "The w-stacking gridder's w-layers.", wstacking),
          mapped("wstack-nwlayers-factor,nwlayers-factor", 1, "<factor>",
                 "Multiply the w-stacking gridder's automatic w-layers.", wstacking),
          mapped("wstack-nwlayers-for-size,nwlayers-for-size", 2, "<width> <height>",
                 "The w-stacking gridder's w-layers for an image of this size.", wstacking),
          mapped("wstack-grid-mode,grid-mode,gridmode", 1, "<kernel>", "The w-stacking gridder's kernel.", wstacking),
          mapped("wstack-kernel-size,kernel-size,gkernelsize", 1, "<pixels>", "The w-stacking gridder's kernel size.",
                 wstacking),
          mapped("wstack-oversampling,oversampling", 1, "<factor>", "The w-stacking gridder's kernel oversampling.",
                 wstacking),
      });
}

}  // namespace gpuclean::app::wsclean_rows

// WSClean's DATA SELECTION OPTIONS and WEIGHTING OPTIONS (W37:main/commandline.cpp).
#include "app/wsclean/wsclean_rows.hpp"

#include <cctype>

#include "app/wsclean/wsclean_angle.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app::wsclean_rows {
namespace v = wsclean_value;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A taper's size in wavelengths: 0 turns it off, as WSClean.
ImageApply lambda(double imaging::WeightingSettings::*member) {
  return [member](ImageOptions& o, const GivenOption& g) { o.run.weighting.*member = v::at_least(g, 0); };
}

}  // namespace

void selection_rows(std::vector<WscleanOption>& rows) {
  add(rows, "DATA SELECTION OPTIONS",
      {
          yes("data-column,datacolumn", 1, "<column>",
              "The column to image (default CORRECTED_DATA when the first MS has it, else DATA).",
              [](ImageOptions& o, const GivenOption& g) { o.selection.data_column = g.values[0]; }),
          yes("model-column", 1, "<column>", "The column the model visibilities are written to (default MODEL_DATA).",
              [](ImageOptions& o, const GivenOption& g) {
                if (g.values[0].empty()) throw clean::InvalidSettings(g.option + " must not be empty");
                o.selection.model_column = g.values[0];
              }),
          yes("model-storage-manager", 1, "default|stokes-i|sisco",
              "The storage manager of a model column that has to be added.",
              [](ImageOptions&, const GivenOption& g) {
                if (lower(g.values[0]) != "default")
                  throw clean::InvalidSettings(g.option + " " + g.values[0] +
                                               " is not offered: gpuclean adds a model column with casacore's "
                                               "default storage manager (give default or leave it out)");
              },
              "default only"),
          yes("pol", 1, "<list>",
              "The polarizations to image: I (default), Q, U, V, XX, XY, YX, YY, RR, RL, LR, LL or lists of them.",
              [](ImageOptions& o, const GivenOption& g) {
                o.pols = io::ms::parse_pol_list(g.values[0]);
                o.selection.pol = o.pols.front();
              },
              "every list WSClean takes (WSClean's set order; XY with YX gives NAME-XY-* and NAME-XYi-*), each "
              "polarization imaged and cleaned on its own; the PSF and restoring beam are the first's"),
          yes("interval", 2, "<start> <end>", "Image only timesteps [start, end) (0 0: all).",
              [](ImageOptions& o, const GivenOption& g) {
                const std::size_t a = v::count(g, 0, 0), b = v::count(g, 0, 1);
                if (a == 0 && b == 0) {
                  o.selection.interval.reset();
                  return;
                }
                if (b <= a) throw clean::InvalidSettings(g.option + " " + g.values[0] + " " + g.values[1] +
                                                         " is empty (the end is exclusive)");
                o.selection.interval = std::pair{a, b};
              }),
          yes("intervals-out,intervalsout", 1, "<count>",
              "Image this many equal intervals of the selected timesteps (NAME-t0000-...).",
              [](ImageOptions& o, const GivenOption& g) { o.intervals_out = v::count(g, 1); }),
          yes("even-timesteps", 0, "", "Image only the even timesteps.",
              [](ImageOptions& o, const GivenOption&) { o.selection.timestep_parity = io::ms::TimestepParity::kEven; }),
          yes("odd-timesteps", 0, "", "Image only the odd timesteps.",
              [](ImageOptions& o, const GivenOption&) { o.selection.timestep_parity = io::ms::TimestepParity::kOdd; }),
          yes("channel-range,channelrange", 2, "<start> <end>", "Image only channels [start, end).",
              [](ImageOptions& o, const GivenOption& g) {
                const std::size_t a = v::count(g, 0, 0), b = v::count(g, 0, 1);
                if (b <= a) throw clean::InvalidSettings(g.option + " " + g.values[0] + " " + g.values[1] +
                                                         " is empty (the end is exclusive)");
                o.selection.channel_begin = a, o.selection.channel_end = b;
              },
              "counted in increasing frequency, as WSClean 3.1 counts them: an MS whose channel frequencies "
              "decrease has channel 0 last"),
          yes("field", 1, "<list>|all", "The fields to image: ids, comma-separated, or all (default 0).",
              [](ImageOptions& o, const GivenOption& g) {
                o.selection.fields.clear();
                o.selection.all_fields = g.values[0] == "all";
                if (!o.selection.all_fields)
                  for (std::size_t f : v::counts(g)) o.selection.fields.push_back(static_cast<int>(f));
              },
              "several fields must share the phase centre; without -field gpuclean takes the only field with rows"),
          yes("spws", 1, "<list>", "Image only these spectral windows (comma-separated; repeated lists add up).",
              [](ImageOptions& o, const GivenOption& g) {
                for (std::size_t s : v::counts(g)) o.selection.spws.insert(s);
              },
              "one spectral window per MS"),
          yes("minuvw-m", 1, "<metres>", "Image only baselines of at least this |uvw| (metres).",
              [](ImageOptions& o, const GivenOption& g) { o.selection.min_uvw_m = v::at_least(g, 0); }),
          yes("maxuvw-m", 1, "<metres>", "Image only baselines of at most this |uvw| (metres; 0: no limit).",
              [](ImageOptions& o, const GivenOption& g) { o.selection.max_uvw_m = v::at_least(g, 0); }),
          yes("minuv-l", 1, "<wavelengths>", "Zero the weight grid's cells inside this uv distance (wavelengths).",
              lambda(&imaging::WeightingSettings::min_uv_lambda)),
          yes("maxuv-l", 1, "<wavelengths>", "Zero the weight grid's cells beyond this uv distance (0: no limit).",
              lambda(&imaging::WeightingSettings::max_uv_lambda)),
      });
  add(rows, "WEIGHTING OPTIONS",
      {
          yes("weight", kWeightValues, "natural|uniform|briggs <robustness>", "The weighting (default uniform).",
              [](ImageOptions& o, const GivenOption& g) {
                const std::string& m = g.values[0];
                if (m == "natural") o.run.weighting.mode = imaging::WeightMode::kNatural;
                else if (m == "uniform") o.run.weighting.mode = imaging::WeightMode::kUniform;
                else if (m == "briggs") {
                  o.run.weighting.mode = imaging::WeightMode::kBriggs;
                  o.run.weighting.briggs_robustness = v::number(GivenOption{g.option + " briggs", {g.values[1]}});
                } else {
                  throw clean::InvalidSettings(g.option + " '" + m + "': natural, uniform or briggs R");
                }
              }),
          refused("super-weight,superweight", 1, "<factor>", "Widen the weighting's cells (CASA's superuniform).",
                  "not supported yet: gpuclean's weight grid has WSClean's cells (-padding sizes it)"),
          yes("mf-weighting,mfs-weighting,mfsweighting", 0, "",
              "One weight grid over every output channel (the default with -join-channels).",
              [](ImageOptions& o, const GivenOption&) { o.run.mf_weighting = true; }),
          yes("no-mf-weighting,no-mfs-weighting,nomfsweighting", 0, "",
              "Undo -join-channels' MF weighting (a given -mf-weighting still wins, as WSClean).",
              [](ImageOptions& o, const GivenOption&) { o.no_mf_weighting = true; }),
          yes("taper-gaussian", 1, "<angle>", "A Gaussian taper of this FWHM (arcseconds unless a unit is given).",
              [](ImageOptions& o, const GivenOption& g) {
                o.run.weighting.gaussian_taper_fwhm_rad =
                    parse_wsclean_angle(g.values[0], g.option, AngleUnit::kArcseconds);
                if (o.run.weighting.gaussian_taper_fwhm_rad < 0)
                  throw clean::InvalidSettings(g.option + " must not be negative");
              }),
          yes("taper-edge", 1, "<wavelengths>", "Zero the cells within this distance of the uv grid's edge.",
              lambda(&imaging::WeightingSettings::edge_taper_lambda)),
          yes("taper-edge-tukey", 1, "<wavelengths>",
              "A Tukey transition of this size inside the edge (after -taper-edge's band).",
              lambda(&imaging::WeightingSettings::edge_tukey_lambda)),
          yes("taper-tukey", 1, "<wavelengths>", "A Tukey transition of this size inside -maxuv-l.",
              lambda(&imaging::WeightingSettings::tukey_lambda)),
          yes("taper-inner-tukey", 1, "<wavelengths>", "A Tukey transition of this size outside -minuv-l.",
              lambda(&imaging::WeightingSettings::inner_tukey_lambda)),
          refused("use-weights-as-taper", 0, "", "Grid every sample as weight 1 and apply its weight as a taper.",
                  "not supported yet: gpuclean's weight grid sums the visibility weights, as WSClean's default"),
          refused("store-imaging-weights", 0, "", "Write the imaging weights to an IMAGING_WEIGHT_SPECTRUM column.",
                  "gpuclean writes nothing into an MS but the model column"),
          yes("weighting-rank-filter", 1, "<level>", "The rank filter's level (default 3; below 1: none).",
              [](ImageOptions& o, const GivenOption& g) { o.run.weighting.rank_filter_level = v::number(g); }),
          yes("weighting-rank-filter-size", 1, "<cells>", "The rank filter's window (default 16).",
              [](ImageOptions& o, const GivenOption& g) { o.run.weighting.rank_filter_size = v::count(g, 1); }),
      });
}

}  // namespace gpuclean::app::wsclean_rows

#pragma once
// One `gpuclean image -predict` run (imaging-plan.md §1: steps 2–3 and 7 run backwards): model
// image(s) → model visibilities in MODEL_DATA, as `wsclean -predict` does. For each output channel
// j (WSClean's division of the selected channels, output_channel_ranges) every selected row of
// every MS is predicted at each channel of j's range from model j:
//   V = Σ_{x,y} M(x, y) e^{+2πi(u l + v m + w(n − 1))}   (u, v, w in wavelengths; no 1/n)
// with M in Jy/pixel, then written by io::ms::ModelDataWriter (XX = YY = V for Stokes I). Flags and
// weights do not matter: WSClean predicts flagged samples too (measured). All predictions are made
// before the first MS is written, so a failure leaves every MS as it was.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "imaging/gridder_cpu.hpp"
#include "io/ms/ms_selection.hpp"
#include "io/staged_outputs.hpp"

namespace gpuclean::imaging {

/// A degridder with predict_cpu's signature and contract (gridder_cpu.hpp): V_k for every sample
/// of `samples` (only u, v, w read) from `model` [y][x], the plan covering every sample's |w|.
using PredictBackend = std::function<std::vector<std::complex<double>>(
    const GridPlan& plan, std::span<const double> model, const Samples& samples, int threads)>;

/// Model image of output channel j: row-major [y][x], width × height of the run, Jy/pixel, finite.
/// The caller reads and checks the files (imaging stays free of FITS, as clean/ does).
using ModelSource = std::function<std::vector<double>(std::size_t output_channel)>;

struct PredictRunSettings {
  ImageGeometry image;  ///< the model's size and pixel scale (radians)
  std::size_t channels_out = 1;
  std::vector<double> channel_division_hz;  ///< -channel-division-frequencies (output_channel_ranges)
  double epsilon = 1e-4;  ///< the degridder's accuracy (WSClean's wgridder default)
  int threads = 0;        ///< ≤ 0: OpenMP's default
  /// The degridder: predict_cpu, or predict_gpu (same signature) where a GPU is used.
  PredictBackend backend = predict_cpu;
};

struct PredictChannel {
  std::size_t channel_begin = 0, channel_end = 0;  ///< of the selected channels, [begin, end)
  std::size_t samples = 0;                         ///< (row, channel) values predicted
  std::size_t w_planes = 0, kernel_support = 0;    ///< of the grid plan
};

struct PredictRunResult {
  std::vector<PredictChannel> channels;
  std::size_t rows = 0;  ///< MS rows written, over every MS
};

/// The selected rows of one MS: their numbers and u, v, w in metres; then the predictions.
struct ModelRows {
  std::vector<std::uint64_t> row;
  std::vector<double> u, v, w;
  std::vector<std::complex<float>> model;  ///< [row][selected channel]
};

/// predict_run's three stages, for a caller that overlaps them with other work (the major
/// cycles read the rows while they clean and write only when every other output is ready):
/// reads every MS's selected rows (throws MsError for an empty selection); predicts each output
/// channel from `models(j)` into `rows` (no MS is touched); stages MODEL_DATA of every MS as a
/// journal in `staged` (in the stage folder of `dir`), which staged.commit() applies together
/// with the run's other outputs (io/ms/model_journal.hpp).
std::vector<ModelRows> read_model_rows(const std::vector<io::ms::MsSelection>& selections);
PredictRunResult predict_model_rows(std::vector<ModelRows>& rows, const std::vector<io::ms::MsSelection>& selections,
                                    const PredictRunSettings& settings, const ModelSource& models);
void stage_model_rows(const std::vector<ModelRows>& rows, const std::vector<io::ms::MsSelection>& selections,
                      PredictRunResult& result, io::StagedOutputs& staged, const std::string& dir,
                      bool later = false);

/// Reads the selected rows' u, v, w of every MS (`selections` as select_visibilities made them,
/// same channels), predicts each output channel from `models(j)`, and writes MODEL_DATA of every
/// MS (staged beside the first MS, committed before it returns). Throws MsError (unreadable or unwritable MS, no rows in the selection) and
/// clean::InvalidInput (a model of the wrong size).
PredictRunResult predict_run(const std::vector<io::ms::MsSelection>& selections, const PredictRunSettings& settings,
                             const ModelSource& models);

}  // namespace gpuclean::imaging

// imaging::predict_run (the library under `gpuclean image -predict`) on small MSs: MODEL_DATA against
// a direct Fourier transform in double, per output channel with its own model, flagged samples
// included; the correlations it writes (XX and YY, an I correlation), the rows it leaves alone
// (autocorrelations), and the backend it is given.
#include <gtest/gtest.h>

#include <algorithm>

#include "imaging/predict_run.hpp"
#include "imaging/weight_grid.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/ms/ms_selection.hpp"
#include "tests/imaging/predict_test_files.hpp"

namespace gpuclean {
namespace {

using test::TempDir;

constexpr double kTolerance = 1e-4;  // max |Δ| / max |V| (plan §6)

std::vector<io::ms::MsSelection> select(const std::string& ms, io::ms::SelectionRequest request = {}) {
  if (request.data_column.empty()) request.data_column = "DATA";
  return io::ms::select_visibilities({io::ms::read_ms_metadata(ms)}, request);
}

/// Runs predict_run with the test models (model j: variant j) through a backend that counts its
/// calls; returns the models used.
std::vector<std::vector<double>> predict(const std::vector<io::ms::MsSelection>& selections,
                                         const imaging::ImageGeometry& g, std::size_t channels_out, int* calls) {
  std::vector<std::vector<double>> models;
  for (std::size_t j = 0; j < channels_out; ++j) models.push_back(test::test_model(g.width, g.height, static_cast<int>(j)));
  imaging::PredictRunSettings settings;
  settings.image = g;
  settings.channels_out = channels_out;
  settings.threads = 2;
  settings.backend = [calls](const imaging::GridPlan& plan, std::span<const double> model, const imaging::Samples& s,
                             int threads) {
    ++*calls;
    return imaging::predict_cpu(plan, model, s, threads);
  };
  const imaging::PredictRunResult r =
      imaging::predict_run(selections, settings, [&](std::size_t j) { return models.at(j); });
  EXPECT_EQ(r.channels.size(), channels_out);
  return models;
}

/// max |MODEL_DATA − DFT| / max |DFT| over correlations `corrs` of every selected row and channel of
/// output channel ranges (j·N/n), each against its own model.
double worst_vs_dft(const test::ModelData& d, const std::vector<double>& freq_hz, const imaging::ImageGeometry& g,
                    const std::vector<std::vector<double>>& models, const std::vector<std::size_t>& corrs,
                    std::size_t* flagged_checked) {
  double diff = 0, peak = 0;
  const std::size_t n = freq_hz.size(), outputs = models.size();
  for (std::size_t r = 0; r < d.rows; ++r) {
    if (d.antenna1[r] == d.antenna2[r]) continue;
    for (std::size_t ch = 0; ch < n; ++ch) {
      std::size_t j = 0;  // output channel j holds channels [j·N/n, (j+1)·N/n)
      while (ch >= (j + 1) * n / outputs) ++j;
      const double lambda = imaging::wavelength_m(freq_hz[ch]);
      const std::complex<double> ref = test::direct_ft(g, models[j], d.u[r] / lambda, d.v[r] / lambda, d.w[r] / lambda);
      peak = std::max(peak, std::abs(ref));
      for (std::size_t k : corrs) {
        diff = std::max(diff, std::abs(std::complex<double>(d.at(r, ch, k)) - ref));
        *flagged_checked += d.flag[(r * d.channels + ch) * d.correlations + k] != 0;
      }
    }
  }
  return diff / peak;
}

TEST(PredictVsDft, XxAndYyEqualTheDftPerOutputChannelFlagsIncluded) {
  // 64² at 60″ (1.1°), so the w term matters; flags (single correlations too), FLAG_ROW and
  // autocorrelation rows in the MS; 3 channels in 2 outputs ({0}, {1, 2}), each its own model.
  TempDir dir;
  const std::string ms = test::make_predict_ms(dir, "a.ms", "xxyy", "--flags --flag-row --autocorrelations 4");
  const auto selections = select(ms);
  const imaging::ImageGeometry g{64, 64, 60.0 / 3600 * M_PI / 180};
  int calls = 0;
  const auto models = predict(selections, g, 2, &calls);
  EXPECT_EQ(calls, 2);  // the backend given, once per output channel
  const test::ModelData d = test::dump_model_data(dir, ms);
  ASSERT_TRUE(d.present);
  std::size_t flagged = 0;
  const double worst = worst_vs_dft(d, selections.front().freq_hz, g, models, {0, 1}, &flagged);
  std::printf("MODEL_DATA XX, YY vs DFT: %.2e of max|V| (%zu flagged samples among them)\n", worst, flagged);
  EXPECT_LE(worst, kTolerance);
  EXPECT_GT(flagged, 0u);  // WSClean predicts flagged samples too
  for (std::size_t r = 0; r < d.rows; ++r)
    for (std::size_t ch = 0; ch < d.channels; ++ch) {
      EXPECT_EQ(d.at(r, ch, 0), d.at(r, ch, 1)) << "row " << r;  // XX = YY = I
      if (d.antenna1[r] == d.antenna2[r]) {
        EXPECT_EQ(d.at(r, ch, 0), std::complex<float>(0)) << "autocorrelation " << r;
      }
    }
}

TEST(PredictVsDft, AnICorrelationGetsI) {
  TempDir dir;
  const std::string ms = test::make_predict_ms(dir, "i.ms", "i");
  const auto selections = select(ms);
  const imaging::ImageGeometry g{48, 40, 30.0 / 3600 * M_PI / 180};
  int calls = 0;
  const auto models = predict(selections, g, 1, &calls);
  const test::ModelData d = test::dump_model_data(dir, ms);
  ASSERT_EQ(d.correlations, 1u);
  std::size_t flagged = 0;
  const double worst = worst_vs_dft(d, selections.front().freq_hz, g, models, {0}, &flagged);
  std::printf("MODEL_DATA I vs DFT: %.2e of max|V|\n", worst);
  EXPECT_LE(worst, kTolerance);
}

TEST(PredictVsDft, ChannelRangeWritesOnlyItsChannels) {
  // -channel-range 1 3 of an MS whose MODEL_DATA holds 7+7j: channel 0 keeps it.
  TempDir dir;
  const std::string ms = test::make_predict_ms(dir, "a.ms", "xxyy");
  test::run_python(dir, test::source_dir() + "/tests/imaging/predict_fixture.py fill " + ms);
  io::ms::SelectionRequest request;
  request.channel_begin = 1, request.channel_end = 3;
  const auto selections = select(ms, request);
  const imaging::ImageGeometry g{64, 64, 20.0 / 3600 * M_PI / 180};
  int calls = 0;
  const auto models = predict(selections, g, 1, &calls);
  const test::ModelData d = test::dump_model_data(dir, ms);
  double diff = 0, peak = 0;
  for (std::size_t r = 0; r < d.rows; ++r)
    for (std::size_t ch = 0; ch < 3; ++ch)
      for (std::size_t k = 0; k < 2; ++k) {
        if (ch == 0) {
          EXPECT_EQ(d.at(r, ch, k), std::complex<float>(7, 7)) << "row " << r;
          continue;
        }
        const double lambda = imaging::wavelength_m(selections.front().freq_hz[ch - 1]);
        const auto ref = test::direct_ft(g, models[0], d.u[r] / lambda, d.v[r] / lambda, d.w[r] / lambda);
        peak = std::max(peak, std::abs(ref));
        diff = std::max(diff, std::abs(std::complex<double>(d.at(r, ch, k)) - ref));
      }
  std::printf("-channel-range 1 3 vs DFT: %.2e of max|V|\n", diff / peak);
  EXPECT_LE(diff / peak, kTolerance);
}

}  // namespace
}  // namespace gpuclean

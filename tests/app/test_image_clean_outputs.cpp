// What `gpuclean image -niter N -device cpu` (the binary) leaves besides its images, against
// Debian's WSClean 3.1 on the same simulated MS (test_image_clean_cli's: 10 points, no noise):
// - the deconvolution header cards: each file has WSClean's set of WSC* cards (WSCMAJOR and
//   WSCMINOR on residual, model and image only; none at all on the MFS image) and its values of
//   WSCNITER, WSCGAIN, WSCMGAIN, WSCTHRES (the -threshold given: 0 with -auto-threshold),
//   WSCNEGCM, WSCNEGST; WSCMAJOR/WSCMINOR are the run's own rounds and components;
// - MODEL_DATA with -mgain < 1: the prediction of the written model images (gpuclean -predict to
//   1e-5, wsclean -predict to -predict's 1e-4), each output channel's into its own channels; none
//   with -mgain 1 or -no-update-model-required (WSClean 3.1 writes none there either);
// - NAME-sources.txt: the writer gives WSClean's own file, byte for byte, from WSClean's model
//   images; gpuclean's list holds the model's flux;
// - -json: the common schema, one major_cycles entry per major cycle;
// - a failure after the images are staged leaves no file and no MODEL_DATA.
// 256² images; each program run takes well under a second.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/image/image_args.hpp"
#include "app/image/source_list.hpp"
#include "app/summary/summary_schema.hpp"
#include "clean/clean_settings.hpp"
#include "clean/errors.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "tests/imaging/predict_test_files.hpp"
#include "tests/io/ms_test_files.hpp"
#include "tests/support/wsclean_version.hpp"

namespace gpuclean {
namespace {

using test::TempDir;

const char* const kImage = "-j 2 -size 256 256 -scale 4asec";
const char* const kWsclean = "wsclean -use-wgridder -no-small-inversion ";

/// One MS for every test (made once), copied for each run.
class ImageCleanOutputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_ = std::make_unique<TempDir>();
    ms_ = shared_->file("a.ms");
    test::run_python(*shared_, test::source_dir() + "/data/simulate_ms.py --out " + ms_ +
                                   " --sky points --antennas 16 --hours 2 --integration 600 --channels 2 --noise 0");
  }
  static void TearDownTestSuite() { shared_.reset(); }

  /// A fresh copy of the MS in the test's folder.
  std::string copy(const std::string& name) const {
    const std::string to = dir_.file(name);
    std::filesystem::copy(ms_, to, std::filesystem::copy_options::recursive);
    return to;
  }
  test::CommandResult gpuclean(const std::string& options, const std::string& ms) const {
    return test::run_gpuclean(dir_, std::string("image -device cpu ") + kImage + " " + options + " " + ms);
  }
  test::CommandResult wsclean(const std::string& options, const std::string& ms) const {
    return test::run_command(dir_, std::string(kWsclean) + kImage + " " + options + " " + ms);
  }

  TempDir dir_;
  static std::unique_ptr<TempDir> shared_;
  static std::string ms_;
};
std::unique_ptr<TempDir> ImageCleanOutputs::shared_;
std::string ImageCleanOutputs::ms_;

std::set<std::string> wsc_keys(const io::FitsImage& f) {
  std::set<std::string> keys;
  for (const std::string& card : f.header.cards())
    if (card.rfind("WSC", 0) == 0) keys.insert(card.substr(0, card.find_first_of(" =")));
  keys.erase("WSCVERSI"), keys.erase("WSCVDATE");  // WSClean's own version
  return keys;
}

double card(const io::FitsImage& f, const char* key) {
  const auto v = f.header.get_double(key);
  EXPECT_TRUE(v.has_value()) << key;
  return v.value_or(NAN);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// "N components" of the run's summary line.
std::size_t components_of(const std::string& out) {
  const std::size_t at = out.find("major cycle(s), ");
  return at == std::string::npos ? 0 : std::stoul(out.substr(at + 16));
}

/// The files of a run named `name` with `channels` output channels (the MFS ones too).
std::vector<std::string> files_of(const std::string& name, std::size_t channels) {
  std::vector<std::string> files;
  std::vector<std::string> tags;
  if (channels == 1) tags = {""};
  for (std::size_t c = 0; c < channels && channels > 1; ++c) tags.push_back("-000" + std::to_string(c));
  if (channels > 1) tags.push_back("-MFS");
  for (const std::string& t : tags)
    for (const char* kind : {"dirty", "psf", "residual", "model", "image"})
      files.push_back(name + t + "-" + kind + ".fits");
  return files;
}

void expect_cards_as_wsclean(const TempDir& dir, const std::string& options, std::size_t channels,
                             const test::CommandResult& ours) {
  const std::size_t cycles = count_of(ours.out, ": major cycle "), components = components_of(ours.out);
  ASSERT_GT(cycles, 0u) << ours.out;
  for (const std::string& file : files_of("", channels)) {
    SCOPED_TRACE(options + ": " + file);
    const io::FitsImage w = io::read_fits_image(dir.file("w" + file)), g = io::read_fits_image(dir.file("g" + file));
    EXPECT_EQ(wsc_keys(g), wsc_keys(w));
    for (const char* key : {"WSCNITER", "WSCGAIN", "WSCMGAIN", "WSCTHRES", "WSCNEGCM", "WSCNEGST"}) {
      if (w.header.has(key)) {
        EXPECT_EQ(card(g, key), card(w, key)) << key;
      }
    }
    if (w.header.has("WSCMAJOR")) {
      EXPECT_EQ(card(g, "WSCMAJOR"), static_cast<double>(cycles));
      EXPECT_EQ(card(g, "WSCMINOR"), static_cast<double>(components));
    }
  }
}

TEST_F(ImageCleanOutputs, HeaderCardsAsWsclean31) {
  SKIP_UNLESS_WSCLEAN_31();
  // One channel with -threshold, -gain, -no-negative; two joined channels with -auto-threshold
  // (WSCTHRES 0) and the MFS files.
  const std::string one = "-niter 200 -mgain 0.8 -threshold 5mJy -gain 0.2 -no-negative";
  const std::string two = "-niter 100 -mgain 0.8 -auto-threshold 3 -channels-out 2 -join-channels";
  for (const auto& [options, channels] : {std::pair{one, std::size_t{1}}, std::pair{two, std::size_t{2}}}) {
    const test::CommandResult w = wsclean(options + " -name " + dir_.file("w"), copy("w.ms"));
    ASSERT_EQ(w.code, 0) << w.err;
    const test::CommandResult g = gpuclean(options + " -name " + dir_.file("g"), copy("g.ms"));
    ASSERT_EQ(g.code, 0) << g.err;
    expect_cards_as_wsclean(dir_, options, channels, g);
    // Both stop at -niter 200 in the first run: WSCMINOR as WSClean's.
    if (channels == 1) {
      EXPECT_EQ(card(io::read_fits_image(dir_.file("g-model.fits")), "WSCMINOR"),
                card(io::read_fits_image(dir_.file("w-model.fits")), "WSCMINOR"));
    }
    std::filesystem::remove_all(dir_.file("w.ms")), std::filesystem::remove_all(dir_.file("g.ms"));
  }
}

/// max |a - b| / max |b| over every cell.
double relative(const test::ModelData& a, const test::ModelData& b) {
  EXPECT_EQ(a.value.size(), b.value.size());
  double diff = 0, peak = 0;
  for (std::size_t i = 0; i < a.value.size() && i < b.value.size(); ++i) {
    peak = std::max(peak, double{std::abs(b.value[i])});
    diff = std::max(diff, double{std::abs(a.value[i] - b.value[i])});
  }
  return diff / peak;
}

TEST_F(ImageCleanOutputs, ModelDataIsThePredictionOfTheWrittenModels) {
  // Two output channels: each channel's model predicts its own input channel.
  const std::string ms = copy("g.ms");
  const test::CommandResult g =
      gpuclean("-niter 200 -mgain 0.8 -threshold 5mJy -channels-out 2 -join-channels -name " + dir_.file("g"), ms);
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_NE(g.out.find("MODEL_DATA: the final model predicted"), std::string::npos) << g.out;
  const test::ModelData ours = test::dump_model_data(dir_, ms);
  ASSERT_TRUE(ours.present);

  const std::string predicted = copy("p.ms"), theirs = copy("w.ms");
  const std::string predict = "-predict -j 2 -channels-out 2 -name " + dir_.file("g") + " ";
  const test::CommandResult p = test::run_gpuclean(dir_, "image " + predict + predicted);
  ASSERT_EQ(p.code, 0) << p.err;
  const test::CommandResult w = test::run_command(dir_, std::string(kWsclean) + predict + theirs);
  ASSERT_EQ(w.code, 0) << w.err;
  const double vs_predict = relative(ours, test::dump_model_data(dir_, predicted));
  const double vs_wsclean = relative(ours, test::dump_model_data(dir_, theirs));
  std::printf("MODEL_DATA vs gpuclean -predict %.2e, vs wsclean -predict %.2e of max|V|\n", vs_predict, vs_wsclean);
  EXPECT_LE(vs_predict, 1e-5);
  EXPECT_LE(vs_wsclean, 1e-4);  // the two degridders (test_predict's tolerance)
}

TEST_F(ImageCleanOutputs, NoModelDataWithMgain1OrNoUpdateModelRequired) {
  for (const std::string options : {"-niter 100", "-niter 100 -mgain 0.8 -no-update-model-required"}) {
    const std::string ms = copy("g.ms");
    const test::CommandResult g = gpuclean(options + " -name " + dir_.file("g"), ms);
    ASSERT_EQ(g.code, 0) << g.err;
    EXPECT_NE(g.out.find("MODEL_DATA left as it was"), std::string::npos) << g.out;
    EXPECT_FALSE(test::dump_model_data(dir_, ms).present) << options;
    std::filesystem::remove_all(ms);
  }
}

/// The source list our writer makes from WSClean's model images of the run `name`.
std::string our_list_of_their_models(const TempDir& dir, const std::string& name, std::size_t channels,
                                     const clean::CleanSettings& settings) {
  std::vector<io::FitsImage> images;
  std::vector<std::vector<double>> models;
  for (std::size_t c = 0; c < channels; ++c) {
    const std::string tag = channels == 1 ? "" : "-000" + std::to_string(c);
    images.push_back(io::read_fits_image(dir.file(name + tag + "-model.fits")));
    models.emplace_back(images.back().pixels.begin(), images.back().pixels.end());
  }
  std::vector<app::SourceListChannel> list;
  for (std::size_t c = 0; c < channels; ++c)
    list.push_back({&models[c], card(images[c], "CRVAL3"), card(images[c], "WSCIMGWG")});
  const io::FitsImage& f = images.front();
  const app::SourceListSky sky{f.width, f.height, card(f, "CDELT2") * M_PI / 180, card(f, "CRVAL1") * M_PI / 180,
                               card(f, "CRVAL2") * M_PI / 180};
  return app::wsclean_source_list(list, sky, settings, nullptr);
}

std::vector<std::vector<std::string>> rows_of(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::string line, cell;
  for (std::stringstream in(text); std::getline(in, line);) {
    rows.emplace_back();
    // The header's cells hold ", "; the spectral terms' brackets hold commas: split on both.
    for (std::stringstream s(line); std::getline(s, cell, ',');) rows.back().push_back(cell);
  }
  return rows;
}

/// Our list against WSClean's: the header, names, types, positions, flags, reference frequency
/// and axes as text; I and the spectral terms as numbers, to 1e-6 of the largest |I|. (WSClean
/// lists its internal model; the model FITS it writes differs from it in the last float bit.)
void expect_same_list(const std::string& ours, const std::string& theirs) {
  const auto a = rows_of(ours), b = rows_of(theirs);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(b.size(), 10u);
  EXPECT_EQ(a[0], b[0]);
  double peak = 0;
  for (std::size_t r = 1; r < b.size(); ++r) peak = std::max(peak, std::abs(std::stod(b[r].at(4))));
  for (std::size_t r = 1; r < b.size(); ++r) {
    ASSERT_EQ(a[r].size(), b[r].size()) << theirs;
    for (std::size_t k = 0; k < b[r].size(); ++k) {
      const bool number = k == 4 || b[r][k].find('[') != std::string::npos || b[r][k].find(']') != std::string::npos;
      const auto strip = [](std::string v) {
        std::erase(v, '['), std::erase(v, ']');
        return v;
      };
      if (number && !strip(b[r][k]).empty())
        EXPECT_NEAR(std::stod(strip(a[r][k])), std::stod(strip(b[r][k])), 1e-6 * peak) << "row " << r << " cell " << k;
      else
        EXPECT_EQ(a[r][k], b[r][k]) << "row " << r << " cell " << k;
    }
  }
}

TEST_F(ImageCleanOutputs, SourceListWriterGivesWsclean31sFileFromItsModels) {
  SKIP_UNLESS_WSCLEAN_31();
  clean::CleanSettings one;
  const test::CommandResult w1 =
      wsclean("-niter 200 -mgain 0.8 -save-source-list -name " + dir_.file("w1"), copy("w1.ms"));
  ASSERT_EQ(w1.code, 0) << w1.err;
  expect_same_list(our_list_of_their_models(dir_, "w1", 1, one), test::slurp(dir_.file("w1-sources.txt")));

  clean::CleanSettings fit;  // two joined channels, their spectra fitted with 2 terms
  fit.fit_spectral_pol = 2;
  const test::CommandResult w2 = wsclean(
      "-niter 200 -mgain 0.8 -channels-out 2 -join-channels -fit-spectral-pol 2 -save-source-list -name " +
          dir_.file("w2"),
      copy("w2.ms"));
  ASSERT_EQ(w2.code, 0) << w2.err;
  expect_same_list(our_list_of_their_models(dir_, "w2", 2, fit), test::slurp(dir_.file("w2-sources.txt")));
}

/// The list's I column summed (a multiscale line's I is its Gaussian's integral), its lines, and
/// how many are GAUSSIAN.
struct ListedFlux {
  double flux = 0;
  std::size_t lines = 0, gaussians = 0;
};
ListedFlux listed_flux(const std::string& path) {
  ListedFlux out;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    for (std::stringstream s(line); std::getline(s, cell, ',');) cells.push_back(cell);
    if (cells.size() < 8) continue;
    out.flux += std::stod(cells[4]);
    ++out.lines;
    out.gaussians += cells[1] == "GAUSSIAN";
  }
  return out;
}

// Issue 45: -multiscale -save-source-list wrote only the header line (the session's components
// were never collected). The list's fluxes sum to the model's, on the whole image and on sub-images.
TEST_F(ImageCleanOutputs, MultiscaleSourceListSumsToTheModel) {
  for (const std::string extra : {"", "-parallel-deconvolution 128 "}) {
    const std::string name = extra.empty() ? "m" : "mp";
    const test::CommandResult g =
        gpuclean("-niter 300 -mgain 0.8 -multiscale -auto-threshold 3 -save-source-list " + extra + "-name " +
                     dir_.file(name),
                 copy(name + ".ms"));
    ASSERT_EQ(g.code, 0) << g.err;
    const io::FitsImage model = io::read_fits_image(dir_.file(name + "-model.fits"));
    double flux = 0;
    for (float v : model.pixels) flux += v;
    const ListedFlux listed = listed_flux(dir_.file(name + "-sources.txt"));
    std::printf("multiscale %ssource list: %zu lines (%zu Gaussians), %.6f Jy; model %.6f Jy\n", extra.c_str(),
                listed.lines, listed.gaussians, listed.flux, flux);
    EXPECT_GT(listed.lines, 1u) << extra;
    EXPECT_GT(std::abs(flux), 0.0) << extra;
    EXPECT_NEAR(listed.flux, flux, 1e-5 * std::abs(flux)) << extra;
  }
  // Averaged deconvolution channels (rapthor's line): the components' spectra over the cleaned
  // planes, fitted; the list's I at the reference frequency sums near the MFS model.
  const std::string four = dir_.file("four.ms");
  test::run_python(dir_, test::source_dir() + "/data/simulate_ms.py --out " + four +
                             " --sky mixed --antennas 16 --hours 1 --integration 600 --channels 4 --noise 0.001");
  const test::CommandResult averaged = gpuclean(
      "-niter 300 -mgain 0.8 -multiscale -auto-threshold 3 -save-source-list -channels-out 4 -join-channels "
      "-fit-spectral-pol 2 -deconvolution-channels 2 -name " + dir_.file("r"),
      four);
  ASSERT_EQ(averaged.code, 0) << averaged.err;
  const io::FitsImage mfs = io::read_fits_image(dir_.file("r-MFS-model.fits"));
  double mfs_flux = 0;
  for (float v : mfs.pixels) mfs_flux += v;
  const ListedFlux listed = listed_flux(dir_.file("r-sources.txt"));
  std::printf("-deconvolution-channels 2: %zu lines, %.6f Jy; MFS model %.6f Jy\n", listed.lines, listed.flux, mfs_flux);
  EXPECT_GT(listed.lines, 1u);
  EXPECT_NEAR(listed.flux, mfs_flux, 0.02 * std::abs(mfs_flux));
}

/// The numbers after `what` in each line of `log` that has it.
std::vector<double> numbers_after(const std::string& log, const std::string& what) {
  std::vector<double> out;
  for (std::size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1))
    out.push_back(std::stod(log.substr(at + what.size())));
  return out;
}

// Issue 45: with a mask, the progress line gave the whole image's re-imaged peak (here the bright
// sources the mask leaves out), which read as a failure beside a threshold met. It states the peak
// the stopping rule searches: inside the mask, the next cycle's starting peak.
TEST_F(ImageCleanOutputs, ProgressLineGivesTheMaskedReimagedPeak) {
  const std::size_t n = 256;
  std::vector<float> mask(n * n, 0.0f);
  for (std::size_t y = 8; y < 48; ++y)  // a corner without the bright sources
    for (std::size_t x = 8; x < 48; ++x) mask[y * n + x] = 1.0f;
  const std::string path = dir_.file("mask.fits");
  io::write_fits_image(path, mask.data(), n, n, io::FitsHeader{}, {long(n), long(n), 1, 1}, io::WriteOptions{});
  const test::CommandResult g =
      gpuclean("-niter 400 -mgain 0.5 -threshold 1mJy -fits-mask " + path + " -name " + dir_.file("k"), copy("k.ms"));
  ASSERT_EQ(g.code, 0) << g.err;
  const std::vector<double> reimaged = numbers_after(g.out, "re-imaged peak ");
  const std::vector<double> starts = numbers_after(g.out, " in all), peak ");
  const io::FitsImage dirty = io::read_fits_image(dir_.file("k-dirty.fits"));
  float whole = 0, inside = 0;
  for (std::size_t i = 0; i < dirty.pixels.size(); ++i) {
    whole = std::max(whole, std::abs(dirty.pixels[i]));
    if (mask[i] > 0) inside = std::max(inside, std::abs(dirty.pixels[i]));
  }
  std::printf("dirty peak %.4g Jy, inside the mask %.4g Jy; re-imaged peaks:", whole, inside);
  for (double v : reimaged) std::printf(" %.4g", v);
  std::printf("\n");
  ASSERT_GE(reimaged.size(), 2u) << g.out;
  ASSERT_EQ(starts.size(), reimaged.size()) << g.out;
  ASSERT_LT(inside, 0.2f * whole);  // the mask leaves the bright sources out
  for (std::size_t k = 0; k < reimaged.size(); ++k) {
    EXPECT_LE(reimaged[k], 1.001 * inside) << g.out;
    if (k + 1 < starts.size()) EXPECT_NEAR(starts[k + 1], reimaged[k], 1e-3 * reimaged[k]) << g.out;
  }
}

// With -local-rms the threshold is compared with the weighted peak (WSClean's too): the line gives
// it beside the plain one (here the weights, the smallest RMS over the local RMS, are below 1).
// Without -local-rms it does not.
TEST_F(ImageCleanOutputs, ProgressLineGivesTheLocalRmsWeightedPeak) {
  const test::CommandResult g = gpuclean(
      "-niter 2000 -mgain 0.8 -local-rms -auto-threshold 3 -name " + dir_.file("w"), copy("w.ms"));
  ASSERT_EQ(g.code, 0) << g.err;
  std::string cycles;  // the progress lines only
  std::stringstream lines(g.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find(": major cycle ") != std::string::npos) cycles += line + "\n";
  const std::vector<double> pairs = numbers_after(cycles, " -> "), thresholds = numbers_after(cycles, ", threshold ");
  const std::vector<double> firsts = numbers_after(cycles, "), peak "), weighted = numbers_after(cycles, "weighted ");
  ASSERT_FALSE(thresholds.empty()) << g.out;
  ASSERT_EQ(pairs.size(), 2 * thresholds.size()) << g.out;  // "peak a -> b", "weighted c -> d" per line
  ASSERT_EQ(weighted.size(), thresholds.size()) << g.out;
  const double peak = firsts.front(), key = weighted.front(), peak_left = pairs[0], key_left = pairs[1];
  std::printf("cycle 1: peak %.4g -> %.4g Jy, weighted %.4g -> %.4g Jy, threshold %.4g Jy\n", peak, peak_left, key,
              key_left, thresholds.front());
  EXPECT_LT(key, 0.9 * peak);  // the weights are applied
  EXPECT_LT(key_left, key);
  EXPECT_LE(key_left, peak_left);
  const test::CommandResult plain =
      gpuclean("-niter 200 -mgain 0.8 -auto-threshold 3 -name " + dir_.file("p"), copy("p.ms"));
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("weighted"), std::string::npos) << plain.out;
}

TEST_F(ImageCleanOutputs, SourceListAndJsonOfARun) {
  const std::string json = dir_.file("g.json");
  const test::CommandResult g =
      gpuclean("-niter 200 -mgain 0.8 -threshold 5mJy -save-source-list -json " + json + " -name " + dir_.file("g"),
               copy("g.ms"));
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(g.err, "");

  // The list: WSClean's header, one POINT per non-zero model pixel, their flux the model's.
  const io::FitsImage model = io::read_fits_image(dir_.file("g-model.fits"));
  double flux = 0;
  std::size_t pixels = 0;
  for (float v : model.pixels) flux += v, pixels += v != 0.0f;
  std::ifstream in(dir_.file("g-sources.txt"));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("Format = Name, Type, Ra, Dec, I, SpectralIndex, LogarithmicSI, ReferenceFrequency='", 0), 0u);
  double listed = 0;
  std::size_t lines = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    for (std::stringstream s(line); std::getline(s, cell, ',');) cells.push_back(cell);
    ASSERT_GE(cells.size(), 8u) << line;
    EXPECT_EQ(cells[0], "s0c" + std::to_string(lines)) << line;
    EXPECT_EQ(cells[1], "POINT") << line;
    listed += std::stod(cells[4]);
    ++lines;
  }
  std::printf("source list: %zu sources, %.6f Jy; model %zu pixels, %.6f Jy\n", lines, listed, pixels, flux);
  EXPECT_EQ(lines, pixels);
  EXPECT_NEAR(listed, flux, 1e-6 * std::abs(flux));

  // The summary: the schema, one entry per major cycle, the totals and the files.
  std::ifstream js(json);
  const nlohmann::json j = nlohmann::json::parse(js);
  EXPECT_EQ(app::summary_schema_problems(j), std::vector<std::string>{});
  EXPECT_EQ(j["front_end"], "image");
  const std::size_t cycles = count_of(g.out, ": major cycle ");
  ASSERT_EQ(j["major_cycles"].size(), cycles);
  std::size_t components = 0;
  for (const nlohmann::json& c : j["major_cycles"]) {
    components += c["components"].get<std::size_t>();
    EXPECT_TRUE(c["predicted"].get<bool>());
    EXPECT_GT(c["seconds"]["deconvolve"].get<double>(), 0.0);
    EXPECT_GT(c["seconds"]["predict"].get<double>(), 0.0);
    EXPECT_GT(c["seconds"]["invert"].get<double>(), 0.0);
  }
  EXPECT_EQ(components, j["totals"]["iterations"].get<std::size_t>());
  EXPECT_EQ(static_cast<double>(components), card(model, "WSCMINOR"));
  EXPECT_EQ(j["totals"]["stop_reason"], "niter");
  EXPECT_TRUE(j["model_data"]["written"].get<bool>());
  EXPECT_NEAR(j["planes"][0]["model_flux"].get<double>(), flux, 1e-6 * std::abs(flux));
  for (const nlohmann::json& f : j["outputs"]) EXPECT_TRUE(std::filesystem::exists(f.get<std::string>())) << f;
}

TEST_F(ImageCleanOutputs, AFailureAfterTheImagesLeavesNothing) {
  // The summary's file fails to stage: staged after the images and the source list, before MODEL_DATA.
  const std::string ms = copy("g.ms");
  const test::CommandResult g = test::run_command(
      dir_, "GPUCLEAN_TEST_FAIL_OUTPUT=g.json " + test::binary_path() + " image -device cpu " + kImage +
                " -niter 100 -mgain 0.8 -save-source-list -json " + dir_.file("g.json") + " -name " + dir_.file("g") +
                " " + ms);
  EXPECT_EQ(g.code, 4) << g.out;
  EXPECT_EQ(count_of(g.err, "\n"), 1u) << g.err;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
    EXPECT_EQ(entry.path().filename().string().rfind("g", 0) == 0 && entry.path() != ms, false) << entry.path();
  EXPECT_FALSE(test::dump_model_data(dir_, ms).present);
}

TEST_F(ImageCleanOutputs, RefusedAsWsclean31BeforeAnyOutput) {
  const auto parse = [](std::vector<std::string> words) {
    for (const char* w : {"-size", "64", "64", "-scale", "4asec", "a.ms"}) words.push_back(w);
    return app::parse_image_args(words);
  };
  EXPECT_THROW(parse({"-save-source-list"}), clean::InvalidSettings);  // "cannot be saved without cleaning"
  EXPECT_THROW(parse({"-json", "s.json"}), clean::InvalidSettings);
  EXPECT_NO_THROW(parse({"-niter", "1", "-save-source-list", "-json", "s.json"}));
  // Several channels without a spectral fit, and another polarization than I (exit 2, one line).
  for (const std::string options : {"-channels-out 2 -join-channels", "-pol xx"}) {
    const std::string ms = copy("g.ms");
    const test::CommandResult g =
        gpuclean("-niter 10 -mgain 0.8 -save-source-list " + options + " -name " + dir_.file("g"), ms);
    EXPECT_EQ(g.code, 2) << options << ": " << g.err;
    EXPECT_EQ(count_of(g.err, "\n"), 1u) << g.err;
    EXPECT_NE(g.err.find("-save-source-list"), std::string::npos) << g.err;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
      EXPECT_NE(entry.path().filename().string().rfind("g-", 0), 0u) << entry.path();
    EXPECT_FALSE(test::dump_model_data(dir_, ms).present);
    std::filesystem::remove_all(ms);
  }
}

}  // namespace
}  // namespace gpuclean

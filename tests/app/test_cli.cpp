// Runs the gpuclean binary as users do and checks outputs, exit codes and messages.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/summary/summary_schema.hpp"
#include "io/fits_reader.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/io/fits_test_files.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/simulated_pair.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using gpuclean::test::TempDir;

namespace {

using Result = gpuclean::test::CommandResult;
using gpuclean::test::run_gpuclean;
using gpuclean::test::slurp;

using gpuclean::test::count_lines;

// A small simulated pair shared by the tests.
using Cli = gpuclean::test::SimulatedPairTest;

}  // namespace

TEST_F(Cli, CleansAndWritesEveryOutput) {
  const Result r = run_gpuclean(tmp_, dirty() + " " + psf() + " -o " + tmp_.file("img.fits") + " --model " +
                                      tmp_.file("model.fits") + " --residual " + tmp_.file("res.fits") +
                                      " --components " + tmp_.file("c.csv") + " --json " + tmp_.file("s.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cycle"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(slurp(tmp_.file("s.json")));
  EXPECT_EQ(gpuclean::app::summary_schema_problems(j), std::vector<std::string>{}) << j.dump(1);
  EXPECT_EQ(j["front_end"], "clean");
  ASSERT_EQ(j["runs"].size(), 1u);
  ASSERT_EQ(j["planes"].size(), 1u);
  const auto &run = j["runs"][0], &plane = j["planes"][0];
  for (const char* key : {"iterations", "major_cycles", "stop_reason", "peak_residual", "stage_seconds"})
    EXPECT_TRUE(run.contains(key)) << key;
  for (const char* key : {"rms_residual", "model_flux", "beam"}) EXPECT_TRUE(plane.contains(key)) << key;
  EXPECT_TRUE(j.contains("device") && j["settings"].contains("algorithm") && j.contains("seconds"));
  for (const char* key : {"total", "read", "clean", "restore", "write"}) EXPECT_TRUE(j["seconds"].contains(key)) << key;
  for (const char* key : {"select", "minor", "convolve", "restore"}) EXPECT_TRUE(run["stage_seconds"].contains(key)) << key;
  EXPECT_EQ(j["device"], gpuclean::cuda::has_usable_device() ? "gpu" : "cpu");  // --device auto
  EXPECT_TRUE(run.contains("peak_gpu_memory_bytes"));
  EXPECT_GT(run["iterations"].get<int>(), 0);
  EXPECT_GT(plane["beam"]["bmaj_arcsec"].get<double>(), 0.0);

  const auto img = gpuclean::io::read_fits_image(tmp_.file("img.fits"));
  const auto in = gpuclean::io::read_fits_image(dirty());
  EXPECT_EQ(img.axes, in.axes);
  for (const char* key : {"CTYPE1", "CTYPE2", "CRVAL1", "CRVAL2", "CDELT1", "CDELT2", "CRPIX1", "CRPIX2", "CTYPE3", "CRVAL3"})
    EXPECT_EQ(img.header.get_string(key), in.header.get_string(key)) << key;
  EXPECT_NEAR(img.header.get_double("BMAJ").value_or(0) * 3600, plane["beam"]["bmaj_arcsec"].get<double>(), 1e-6);
  EXPECT_EQ(img.header.get_string("GCSTOP").value_or(""), run["stop_reason"].get<std::string>());
  EXPECT_TRUE(img.header.has("ORIGIN"));
  EXPECT_EQ(gpuclean::io::read_fits_image(tmp_.file("model.fits")).header.get_string("BUNIT").value_or(""), "JY/PIXEL");

  // Components: one line per model pixel, their flux adds up to the model flux.
  std::istringstream csv(slurp(tmp_.file("c.csv")));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "x,y,ra_deg,dec_deg,flux_jy");
  double sum = 0.0;
  while (std::getline(csv, line)) sum += std::stod(line.substr(line.rfind(',') + 1));
  EXPECT_NEAR(sum, plane["model_flux"].get<double>(), 1e-4 * std::abs(sum) + 1e-9);
}

TEST_F(Cli, JsonToStdoutKeepsStdoutClean) {
  const Result r = run_gpuclean(tmp_, dirty() + " " + psf() + " -o " + tmp_.file("img.fits") + " --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(nlohmann::json::accept(r.out)) << r.out;
  EXPECT_EQ(gpuclean::app::summary_schema_problems(nlohmann::json::parse(r.out)), std::vector<std::string>{});
}

TEST_F(Cli, MissingFile) {
  const Result r = run_gpuclean(tmp_, tmp_.file("nope.fits") + " " + psf() + " -o " + tmp_.file("o.fits"));
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp_.file("o.fits")));
}

TEST_F(Cli, TextFileNamedFits) {
  std::ofstream(tmp_.file("text.fits")) << "hello\n";
  const Result r = run_gpuclean(tmp_, tmp_.file("text.fits") + " " + psf() + " -o " + tmp_.file("o.fits"));
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("not a readable FITS file"), std::string::npos) << r.err;
}

TEST_F(Cli, PsfThatDoesNotFit) {
  gpuclean::test::RawFitsSpec spec;
  spec.axes = {32, 32};
  gpuclean::test::write_raw_fits(tmp_.file("small.fits"), spec, std::vector<double>(32 * 32, 0.5));
  const Result r = run_gpuclean(tmp_, dirty() + " " + tmp_.file("small.fits") + " -o " + tmp_.file("o.fits"));
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("at least as large as the image"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp_.file("o.fits")));
}

TEST_F(Cli, NaNPsf) {
  gpuclean::test::RawFitsSpec spec;
  spec.axes = {128, 128};
  std::vector<double> v(128 * 128, 0.1);
  v[64 * 128 + 64] = 1.0;
  v[7] = std::numeric_limits<double>::quiet_NaN();
  gpuclean::test::write_raw_fits(tmp_.file("nanpsf.fits"), spec, v);
  const Result r = run_gpuclean(tmp_, dirty() + " " + tmp_.file("nanpsf.fits") + " -o " + tmp_.file("o.fits"));
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("NaN"), std::string::npos) << r.err;
}

TEST_F(Cli, ExistingOutputNeedsOverwrite) {
  std::ofstream(tmp_.file("o.fits")) << "keep me";
  const Result r = run_gpuclean(tmp_, dirty() + " " + psf() + " -o " + tmp_.file("o.fits"));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--overwrite"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(tmp_.file("o.fits")), "keep me");
  const Result ok = run_gpuclean(tmp_, dirty() + " " + psf() + " -o " + tmp_.file("o.fits") + " --overwrite -q");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST_F(Cli, NeverWritesOverAnInput) {
  fs::copy_file(dirty(), tmp_.file("d.fits"));
  const std::string before = slurp(tmp_.file("d.fits"));
  const Result r = run_gpuclean(tmp_, tmp_.file("d.fits") + " " + psf() + " -o " + tmp_.file("d.fits") + " --overwrite");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("never writes over an input"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(tmp_.file("d.fits")), before);
}

TEST_F(Cli, UnknownOption) {
  const Result r = run_gpuclean(tmp_, dirty() + " " + psf() + " -o " + tmp_.file("o.fits") + " --frobnicate 3");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
}

TEST_F(Cli, BadSettingIsRejectedBeforeAnyWork) {
  const Result r = run_gpuclean(tmp_, dirty() + " " + psf() + " -o " + tmp_.file("o.fits") + " --gain 3");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--gain"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(Cli, BeamShapeOverride) {
  const Result r = run_gpuclean(tmp_, dirty() + " " + psf() + " -o " + tmp_.file("o.fits") +
                                      " --beam-shape 20 10 30 --json " + tmp_.file("s.json") + " -q");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto img = gpuclean::io::read_fits_image(tmp_.file("o.fits"));
  EXPECT_NEAR(img.header.get_double("BMAJ").value_or(0) * 3600.0, 20.0, 1e-6);
  EXPECT_NEAR(img.header.get_double("BMIN").value_or(0) * 3600.0, 10.0, 1e-6);
  EXPECT_NEAR(img.header.get_double("BPA").value_or(0), 30.0, 1e-6);
  EXPECT_FALSE(nlohmann::json::parse(slurp(tmp_.file("s.json")))["planes"][0]["beam"]["fitted"].get<bool>());
}

TEST_F(Cli, HogbomAndOptionsRun) {
  const Result r = run_gpuclean(tmp_, dirty() + " " + psf() + " -o " + tmp_.file("o.fits") +
                                      " --algorithm hogbom --no-negative --clean-border 5 --niter 50 --mgain 0.8 "
                                      "--device cpu --json " + tmp_.file("s.json") + " -q");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(tmp_.file("s.json")));
  EXPECT_EQ(j["settings"]["algorithm"], "hogbom");
  EXPECT_LE(j["runs"][0]["iterations"].get<int>(), 50);
}

TEST_F(Cli, WscleanPairKeepsItsHeaderAndBeam) {
  const std::string base = gpuclean::test::shared_dir() + "/data/wsclean-256/meerkat-cdfs-256-";
  if (!fs::exists(base + "dirty.fits")) GTEST_SKIP() << "shared WSClean data not present";
  const Result r = run_gpuclean(tmp_, base + "dirty.fits " + base + "psf.fits -o " + tmp_.file("img.fits") + " -q --json " +
                                      tmp_.file("s.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto img = gpuclean::io::read_fits_image(tmp_.file("img.fits"));
  const auto in = gpuclean::io::read_fits_image(base + "dirty.fits");
  EXPECT_EQ(img.axes, (std::vector<long>{256, 256, 1, 1}));
  for (const char* key : {"CTYPE1", "CRVAL1", "CDELT1", "CRPIX1", "CTYPE2", "CRVAL2", "CDELT2", "CTYPE3", "CRVAL3",
                          "CTYPE4", "TELESCOP", "DATE-OBS", "WSCVERSI", "EQUINOX", "SPECSYS"})
    EXPECT_EQ(img.header.get_string(key), in.header.get_string(key)) << key;
  // WSClean fitted 7.44" x 6.07" at 158.8 deg; our fit of the same PSF must be close.
  const auto j = nlohmann::json::parse(slurp(tmp_.file("s.json")));
  const auto& beam = j["planes"][0]["beam"];
  EXPECT_NEAR(beam["bmaj_arcsec"].get<double>(), 7.44, 0.03 * 7.44);
  EXPECT_NEAR(beam["bmin_arcsec"].get<double>(), 6.07, 0.03 * 6.07);
  EXPECT_NEAR(beam["bpa_deg"].get<double>(), 158.8, 6.0);
  EXPECT_EQ(j["runs"][0]["stop_reason"], "threshold");
}

TEST(Sample, DeconvolutionRecoversTheKnownSky) {
  // The bundled sample was simulated, so its sky is known: restored peaks of the bright point
  // sources must match their true fluxes, and the model must hold most of the true flux.
  const std::string dir = gpuclean::test::source_dir() + "/data/sample/";
  TempDir tmp;
  const Result r = run_gpuclean(tmp, dir + "dirty.fits " + dir + "psf.fits -o " + tmp.file("img.fits") + " -q --json " +
                                         tmp.file("s.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto img = gpuclean::io::read_fits_image(tmp.file("img.fits"));
  const auto truth = gpuclean::io::read_fits_image(dir + "truth.fits");
  std::istringstream csv(slurp(dir + "sources.csv"));
  std::string line;
  std::getline(csv, line);
  std::vector<std::tuple<double, int, int>> points;  // flux, x, y
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (f[1] == "point") points.emplace_back(std::stod(f[6]), std::stoi(f[2]), std::stoi(f[3]));
  }
  std::sort(points.rbegin(), points.rend());
  ASSERT_GE(points.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    const auto [flux, x, y] = points[i];
    EXPECT_NEAR(img.pixels[static_cast<std::size_t>(y) * img.width + static_cast<std::size_t>(x)], flux, 0.02 * flux)
        << "source at (" << x << ", " << y << ")";
  }
  double truth_flux = 0.0;
  for (float v : truth.pixels) truth_flux += v;
  const auto j = nlohmann::json::parse(slurp(tmp.file("s.json")));
  const auto& plane = j["planes"][0];
  EXPECT_GT(plane["model_flux"].get<double>(), 0.85 * truth_flux);
  EXPECT_LT(plane["model_flux"].get<double>(), 1.02 * truth_flux);
  EXPECT_LT(plane["rms_residual"].get<double>(), 1.5e-4) << "the simulated noise is 1e-4 Jy/beam";
}

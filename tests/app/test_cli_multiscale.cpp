// The multiscale and auto-mask options from the command line: refused settings are one line with
// exit code 2 before any work; a run writes the scale of every component, the multiscale block of
// the JSON summary and the provenance keywords.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/fits_reader.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/simulated_pair.hpp"

namespace fs = std::filesystem;
using gpuclean::test::count_lines;
using gpuclean::test::run_gpuclean;
using gpuclean::test::slurp;

namespace {

class CliMultiscale : public gpuclean::test::SimulatedPairTest {
 protected:
  std::string pair() const { return dirty() + " " + psf() + " -o " + tmp_.file("img.fits"); }
  void expect_usage_error(const std::string& options, const std::string& message) {
    const auto r = run_gpuclean(tmp_, pair() + " " + options);
    EXPECT_EQ(r.code, 2) << options << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp_.file("img.fits")));
  }
};

}  // namespace

TEST_F(CliMultiscale, SettingsAreCheckedBeforeAnyWork) {
  expect_usage_error("--multiscale-scales 0,4", "--multiscale");
  expect_usage_error("--multiscale --multiscale-scales 0,-4", "--multiscale-scales takes sizes in pixels >= 0");
  expect_usage_error("--multiscale --multiscale-scales 0,4,4", "the same scale twice");
  expect_usage_error("--multiscale --multiscale-gain 0", "--multiscale-gain must be in (0, 1]");
  expect_usage_error("--multiscale --multiscale-scale-bias 1.5", "--multiscale-scale-bias must be in (0, 1]");
  expect_usage_error("--multiscale --multiscale-shape square", "--multiscale-shape");
  expect_usage_error("--multiscale --multiscale-max-scales -1", "is negative");
  expect_usage_error("--multiscale --algorithm hogbom", "drop --algorithm hogbom");
  expect_usage_error("--auto-mask 2 --auto-threshold 3", "--auto-mask must exceed --auto-threshold");
}

TEST_F(CliMultiscale, RunWritesScalesInEveryOutput) {
  const auto r = run_gpuclean(tmp_, pair() + " --device cpu --niter 400 --multiscale --multiscale-scales 0,8,16"
                                     " --auto-mask 6 --components " + tmp_.file("c.csv") + " --json " +
                                     tmp_.file("s.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string csv = slurp(tmp_.file("c.csv"));
  EXPECT_EQ(csv.rfind("x,y,ra_deg,dec_deg,flux_jy,scale_pixels\n", 0), 0u) << csv.substr(0, 80);
  const auto j = nlohmann::json::parse(slurp(tmp_.file("s.json")));
  const auto& run = j["runs"][0];
  ASSERT_TRUE(j["settings"]["multiscale"]["enabled"].get<bool>());
  ASSERT_EQ(run["scales"].size(), 3u);
  EXPECT_EQ(run["scales"][1]["size_pixels"], 8.0);
  std::size_t total = 0;
  for (const auto& s : run["scales"]) total += s["components"].get<std::size_t>();
  EXPECT_EQ(total, run["iterations"].get<std::size_t>());
  EXPECT_EQ(j["settings"]["algorithm"], "multiscale");
  EXPECT_EQ(j["settings"]["auto_mask"], 6.0);
  EXPECT_TRUE(run["auto_mask"].is_object());
  const std::string header = slurp(tmp_.file("img.fits")).substr(0, 28800);
  EXPECT_NE(header.find("GCMSCALE="), std::string::npos);
  EXPECT_NE(header.find("GCSCALES= '0,8,16"), std::string::npos);  // FITS pads short strings
  EXPECT_NE(header.find("GCAMASK ="), std::string::npos);
}

TEST_F(CliMultiscale, LocalRmsSettingsAreCheckedBeforeAnyWork) {
  expect_usage_error("--noise-map " + tmp_.file("n.fits"), "add --local-rms");
  expect_usage_error("--local-rms --algorithm hogbom", "drop --algorithm hogbom");
  expect_usage_error("--local-rms --local-rms-window 0", "--local-rms-window must be");
  expect_usage_error("--local-rms --local-rms-window -3", "--local-rms-window must be");
  EXPECT_FALSE(fs::exists(tmp_.file("n.fits")));
}

TEST_F(CliMultiscale, LocalRmsWritesItsMapAndReportsIt) {
  const auto r = run_gpuclean(tmp_, pair() + " --device cpu --niter 300 --local-rms --local-rms-window 10 --noise-map " +
                                     tmp_.file("noise.fits") + " --json " + tmp_.file("s.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(tmp_.file("s.json")));
  const auto& local_rms = j["runs"][0]["local_rms"];
  ASSERT_TRUE(local_rms.is_object());
  EXPECT_EQ(local_rms["window_beams"], 10.0);
  const double lo = local_rms["min_rms"].get<double>(), hi = local_rms["max_rms"].get<double>();
  EXPECT_GT(lo, 0.0);
  EXPECT_GE(hi, lo);
  EXPECT_EQ(j["runs"][0]["noise_sigma"].get<double>(), lo);  // the auto-threshold's sigma is the lowest local noise
  EXPECT_NE(j["settings"]["stopping_rules"].get<std::string>().find("--local-rms"), std::string::npos);
  const auto map = gpuclean::io::read_fits_image(tmp_.file("noise.fits"));
  const auto in = gpuclean::io::read_fits_image(dirty());
  ASSERT_EQ(map.width, in.width);
  ASSERT_EQ(map.height, in.height);
  EXPECT_EQ(map.header.get_string("CTYPE1"), in.header.get_string("CTYPE1"));
  EXPECT_EQ(map.header.get_string("BUNIT").value_or(""), "JY/BEAM");
  float map_lo = 1e30f, map_hi = 0.0f;
  for (float v : map.pixels) map_lo = std::min(map_lo, v), map_hi = std::max(map_hi, v);
  EXPECT_FLOAT_EQ(map_lo, static_cast<float>(lo));
  EXPECT_FLOAT_EQ(map_hi, static_cast<float>(hi));
  const auto img = gpuclean::io::read_fits_image(tmp_.file("img.fits"));
  EXPECT_TRUE(img.header.has("GCLRMS"));
  EXPECT_EQ(img.header.get_double("GCLRMSW").value_or(0.0), 10.0);
}

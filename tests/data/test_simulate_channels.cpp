// Wideband simulation (data/simulate_channels.hpp): frequency-scaled uv coverage, spectral
// indices, MFS weighting, and the WSClean-style files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "data/simulate_channels.hpp"
#include "io/fits_error.hpp"
#include "io/fits_reader.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace gd = gpuclean::data;
namespace fs = std::filesystem;

namespace {

gd::SimulationSettings quiet(std::size_t size) {
  gd::SimulationSettings s;
  s.size = size;
  s.noise = 0.0;
  return s;
}

gd::ChannelSettings band(std::size_t channels, double bandwidth_hz) {
  gd::ChannelSettings c;
  c.channels = channels;
  c.bandwidth_hz = bandwidth_hz;
  return c;
}

double rms(const std::vector<float>& image) {
  double sum = 0.0;
  for (float v : image) sum += static_cast<double>(v) * v;
  return std::sqrt(sum / static_cast<double>(image.size()));
}

}  // namespace

TEST(SimulateChannels, ChannelsAreEqualSlicesOfTheBandAroundTheReference) {
  const auto sim = gd::simulate_channels(quiet(32), band(4, 4e8));
  ASSERT_EQ(sim.frequencies_hz.size(), 4u);
  const std::vector<double> want = {1.25e9, 1.35e9, 1.45e9, 1.55e9};
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_NEAR(sim.frequencies_hz[c], want[c], 1e-3);
    EXPECT_DOUBLE_EQ(sim.widths_hz[c], 1e8);
    EXPECT_GT(sim.image_weights[c], 0.0);
  }
}

// A baseline spans nu/nu0 more wavelengths at nu, so the beam's width goes as nu0/nu.
TEST(SimulateChannels, PsfWidthScalesInverselyWithFrequency) {
  for (const char* weighting : {"natural", "briggs"}) {
    SCOPED_TRACE(weighting);
    auto s = quiet(128);
    s.pixels_per_beam = 8.0;  // a wide beam measures its width finely
    if (std::string(weighting) == "natural") s.weighting = {gd::WeightingMode::kNatural, 0.0};
    const auto sim = gd::simulate_channels(s, band(8, 8e8));
    const double low = sim.channels.front().beam_fwhm_px, high = sim.channels.back().beam_fwhm_px;
    const double want = sim.frequencies_hz.back() / sim.frequencies_hz.front();  // 1.75 / 1.05
    EXPECT_NEAR(low / high, want, 0.05 * want) << "FWHM " << low << " at the bottom, " << high << " at the top";
    // Every channel's PSF is its own, with peak 1 at the centre.
    for (std::size_t c = 1; c < sim.channels.size(); ++c) {
      const auto& a = sim.channels[c - 1].psf;
      const auto& b = sim.channels[c].psf;
      double differ = 0.0;
      for (std::size_t i = 0; i < a.size(); ++i) differ = std::max(differ, static_cast<double>(std::abs(a[i] - b[i])));
      EXPECT_GT(differ, 0.01) << "channels " << c - 1 << " and " << c;
      EXPECT_FLOAT_EQ(b[64 * 128 + 64], 1.0f);
    }
  }
}

TEST(SimulateChannels, PointSourceFollowsItsSpectralIndex) {
  auto s = quiet(128);
  s.sources = 1;
  s.gaussians = 0;
  const auto sim = gd::simulate_channels(s, band(5, 6e8));
  ASSERT_EQ(sim.sources.size(), 1u);
  const auto& src = sim.sources[0];
  EXPECT_DOUBLE_EQ(sim.spectral_indices[0], -0.7);
  const std::size_t at = static_cast<std::size_t>(src.y) * s.size + static_cast<std::size_t>(src.x);
  for (std::size_t c = 0; c < sim.channels.size(); ++c) {
    SCOPED_TRACE(c);
    const auto& ch = sim.channels[c];
    const double want = src.flux * std::pow(sim.frequencies_hz[c] / s.freq_hz, -0.7);
    EXPECT_EQ(ch.sources[0].x, src.x);
    EXPECT_EQ(ch.sources[0].y, src.y);
    EXPECT_NEAR(ch.truth[at], want, 1e-5 * want);
    EXPECT_NEAR(ch.dirty[at], want, 0.02 * want);
    EXPECT_EQ(*std::max_element(ch.dirty.begin(), ch.dirty.end()), ch.dirty[at]);
  }
  // The end channels differ by (1.64 / 1.16)^0.7 = 1.27: the spectrum is really there.
  EXPECT_GT(sim.channels.front().truth[at], 1.25f * sim.channels.back().truth[at]);
}

TEST(SimulateChannels, SpectralIndicesAreDrawnFromTheRangeWithoutMovingTheSky) {
  auto s = quiet(64);
  s.sources = 30;
  auto c = band(2, 2e8);
  c.spectral_index_min = -1.5;
  c.spectral_index_max = 0.5;
  const auto sim = gd::simulate_channels(s, c);
  const auto plain = gd::simulate(s);
  ASSERT_EQ(sim.spectral_indices.size(), plain.sources.size());
  for (std::size_t k = 0; k < plain.sources.size(); ++k) {
    EXPECT_GE(sim.spectral_indices[k], -1.5);
    EXPECT_LE(sim.spectral_indices[k], 0.5);
    EXPECT_EQ(sim.sources[k].x, plain.sources[k].x);
    EXPECT_EQ(sim.sources[k].flux, plain.sources[k].flux);
  }
  const auto [lo, hi] = std::minmax_element(sim.spectral_indices.begin(), sim.spectral_indices.end());
  EXPECT_GT(*hi - *lo, 1.0);
  EXPECT_EQ(gd::simulate_channels(s, c).spectral_indices, sim.spectral_indices);
}

TEST(SimulateChannels, OneChannelIsTheSingleChannelSimulatorBitForBit) {
  gd::SimulationSettings s;  // with noise: the noise stream must be the same too
  s.size = 64;
  s.seed = 7;
  const auto plain = gd::simulate(s);
  const auto sim = gd::simulate_channels(s, gd::ChannelSettings{});
  ASSERT_EQ(sim.channels.size(), 1u);
  EXPECT_EQ(sim.frequencies_hz[0], s.freq_hz);
  EXPECT_EQ(sim.channels[0].dirty, plain.dirty);
  EXPECT_EQ(sim.channels[0].psf, plain.psf);
  EXPECT_EQ(sim.channels[0].truth, plain.truth);
  EXPECT_EQ(sim.channels[0].pixel_deg, plain.pixel_deg);
}

TEST(SimulateChannels, NoisePerChannelIsScaledSoTheMfsImageHasTheRequestedNoise) {
  gd::SimulationSettings s;
  s.size = 128;
  s.sources = 0;
  s.gaussians = 0;
  s.noise = 1e-4;
  const auto sim = gd::simulate_channels(s, band(4, 4e8));
  for (const auto& ch : sim.channels) EXPECT_NEAR(rms(ch.dirty), 2e-4, 1e-6);
  EXPECT_NEAR(rms(gd::mfs_images(sim).dirty), 1e-4, 0.15e-4);
}

TEST(SimulateChannels, MfsIsTheWeightedMeanAndItsPsfPeaksAtOne) {
  auto s = quiet(64);
  const auto sim = gd::simulate_channels(s, band(3, 3e8));
  const auto mfs = gd::mfs_images(sim);
  double sum_w = 0.0, sum = 0.0;
  const std::size_t at = 20 * 64 + 33;
  for (std::size_t c = 0; c < 3; ++c) {
    sum_w += sim.image_weights[c];
    sum += sim.image_weights[c] * sim.channels[c].dirty[at];
  }
  EXPECT_DOUBLE_EQ(mfs.weight, sum_w);
  EXPECT_NEAR(mfs.dirty[at], sum / sum_w, 1e-6);
  EXPECT_FLOAT_EQ(mfs.psf[32 * 64 + 32], 1.0f);
}

TEST(SimulateChannels, SettingsOutOfRangeSayWhatToChange) {
  const gd::SimulationSettings s;
  const auto refused = [&](const gd::ChannelSettings& c, const std::string& option) {
    try {
      gd::validate(c, s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what()).find(option) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(refused(band(0, 0.0), "--channels"));
  EXPECT_TRUE(refused(band(1025, 1e8), "--channels"));
  EXPECT_TRUE(refused(band(4, 0.0), "--bandwidth"));
  EXPECT_TRUE(refused(band(4, -1e8), "--bandwidth"));
  EXPECT_TRUE(refused(band(4, 2.0 * s.freq_hz), "--bandwidth"));
  auto c = band(4, 1e8);
  c.spectral_index_min = 0.5;
  c.spectral_index_max = -0.5;
  EXPECT_TRUE(refused(c, "--spectral-index"));
  c.spectral_index_max = NAN;
  EXPECT_TRUE(refused(c, "--spectral-index"));
  EXPECT_NO_THROW(gd::validate(band(1, 0.0), s));
  EXPECT_NO_THROW(gd::validate(band(1024, 1e9), s));
  EXPECT_THROW(gd::simulate_channels(s, band(4, 0.0)), std::invalid_argument);
}

TEST(WriteChannelSimulation, WritesWscleanNamesAndHeaders) {
  gpuclean::test::TempDir tmp;
  const std::string dir = tmp.file("cube");
  const auto s = quiet(32);
  const auto c = band(3, 3e8);
  const auto sim = gd::simulate_channels(s, c);
  gd::check_channel_outputs(dir, "obs", 3, false);
  gd::write_channel_simulation(sim, s, c, dir, "obs", false, "gpuclean simulate --channels 3");

  const auto names = gd::channel_output_names("obs", 3);
  EXPECT_EQ(names.size(), 3u * 2 + 2 + 3 + 1);
  for (const char* name : {"obs-0000-dirty.fits", "obs-0002-psf.fits", "obs-MFS-dirty.fits", "obs-MFS-psf.fits",
                           "truth-0000.fits", "truth-0002.fits", "sources.csv"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_NE(std::find(names.begin(), names.end(), entry.path().filename().string()), names.end()) << entry.path();
  }
  EXPECT_EQ(files, names.size());

  for (std::size_t i = 0; i < 3; ++i) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%04zu", i);
    for (const std::string& file : {"obs-" + std::string(prefix) + "-dirty.fits", "obs-" + std::string(prefix) + "-psf.fits",
                                   "truth-" + std::string(prefix) + ".fits"}) {
      SCOPED_TRACE(file);
      const auto image = gpuclean::io::read_fits_image(dir + "/" + file);
      EXPECT_EQ(image.axes, (std::vector<long>{32, 32, 1, 1}));
      EXPECT_EQ(image.header.get_string("CTYPE3"), "FREQ");
      EXPECT_EQ(image.header.get_string("CTYPE4"), "STOKES");
      EXPECT_NEAR(*image.header.get_double("CRVAL3"), sim.frequencies_hz[i], 1e-3);
      EXPECT_NEAR(*image.header.get_double("CDELT3"), 1e8, 1e-3);
      EXPECT_NEAR(*image.header.get_double("WSCIMGWG"), sim.image_weights[i], 1e-10 * sim.image_weights[i]);
      EXPECT_EQ(image.header.get_double("WSCCHANS"), static_cast<double>(i));
      EXPECT_EQ(image.header.get_double("WSCCHANE"), static_cast<double>(i + 1));
    }
    EXPECT_EQ(gpuclean::io::read_fits_image(dir + "/truth-" + prefix + ".fits").header.get_string("BUNIT"), "JY/PIXEL");
    EXPECT_EQ(gpuclean::io::read_fits_image(dir + "/obs-" + prefix + "-psf.fits").pixels, sim.channels[i].psf);
  }
  const auto mfs = gpuclean::io::read_fits_image(dir + "/obs-MFS-psf.fits");
  EXPECT_NEAR(*mfs.header.get_double("CRVAL3"), s.freq_hz, 1e-3);
  EXPECT_NEAR(*mfs.header.get_double("CDELT3"), 3e8, 1e-3);
  const double weight = sim.image_weights[0] + sim.image_weights[1] + sim.image_weights[2];
  EXPECT_NEAR(*mfs.header.get_double("WSCIMGWG"), weight, 1e-10 * weight);
  EXPECT_EQ(mfs.header.get_double("WSCCHANS"), 0.0);
  EXPECT_EQ(mfs.header.get_double("WSCCHANE"), 3.0);
  EXPECT_FLOAT_EQ(mfs.pixels[16 * 32 + 16], 1.0f);

  std::ifstream csv(dir + "/sources.csv");
  std::string head;
  std::getline(csv, head);
  EXPECT_EQ(head, "id,kind,x,y,ra_deg,dec_deg,flux_jy,fwhm_major_arcsec,fwhm_minor_arcsec,pa_deg,spectral_index,"
                  "ref_freq_hz");
  std::size_t rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, sim.sources.size());
}

TEST(WriteChannelSimulation, RefusesExistingOutputsUnlessOverwrite) {
  gpuclean::test::TempDir tmp;
  const std::string dir = tmp.file("cube");
  const auto s = quiet(16);
  const auto c = band(2, 2e8);
  const auto sim = gd::simulate_channels(s, c);
  fs::create_directories(dir);
  std::ofstream(dir + "/truth-0001.fits") << "not mine";
  const auto exists = [](const auto& call) {
    try {
      call();
    } catch (const gpuclean::io::FitsError& e) {
      return e.kind() == gpuclean::io::FitsError::Kind::kExists;
    }
    return false;
  };
  EXPECT_TRUE(exists([&] { gd::check_channel_outputs(dir, "sim", 2, false); }));
  EXPECT_TRUE(exists([&] { gd::write_channel_simulation(sim, s, c, dir, "sim", false, "test"); }));
  EXPECT_FALSE(fs::exists(dir + "/sim-0000-dirty.fits")) << "all files or none";
  EXPECT_NO_THROW(gd::check_channel_outputs(dir, "other", 1, false));
  EXPECT_NO_THROW(gd::write_channel_simulation(sim, s, c, dir, "sim", true, "test"));
  EXPECT_TRUE(fs::exists(dir + "/sim-MFS-psf.fits"));
  EXPECT_THROW(gd::check_channel_outputs(dir, "a/b", 2, true), std::invalid_argument);
  EXPECT_THROW(gd::check_channel_outputs(dir, "", 2, true), std::invalid_argument);
}

// Cubes and WSClean channel sets from the command line: a cube of identical planes gives every
// plane the single-plane result; mismatched cubes and settings are refused with one line before
// any work; WSClean-named channel files give WSClean-named outputs (with the MFS images) that
// keep every header card (the MFS images NAME-MFS-dirty.fits's); a joined, fitted run writes a
// WSClean source list; a joined multiscale run with a logarithmic fit writes Gaussian sources with
// their spectral indices and a component list with the scales; on a GPU, --compare-select
// compares a joined run's selections.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/summary/summary_schema.hpp"
#include "io/fits_cube.hpp"
#include "io/fits_reader.hpp"
#include "io/fits_writer.hpp"
#include "select/cuda/device_info.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/simulated_pair.hpp"

namespace fs = std::filesystem;
using gpuclean::test::count_lines;
using gpuclean::test::run_gpuclean;
using gpuclean::test::slurp;
namespace io = gpuclean::io;
namespace app = gpuclean::app;

namespace {

class CubeCli : public gpuclean::test::SimulatedPairTest {
 protected:
  // A cube of `channels` copies of `plane` along FREQ (1.3 GHz + 50 MHz steps), Stokes I.
  std::string cube_of(const std::string& plane, std::size_t channels, const std::string& name) {
    const io::FitsImage img = io::read_fits_image(plane);
    io::FitsCube layout;
    layout.width = img.width;
    layout.height = img.height;
    layout.channels = channels;
    layout.stokes = 1;
    layout.order = {io::CubeAxis::kFreq, io::CubeAxis::kStokes};
    layout.axes = {static_cast<long>(img.width), static_cast<long>(img.height), static_cast<long>(channels), 1};
    layout.stokes_codes = {1};
    io::FitsHeader h = img.header;
    h.set_string("CTYPE3", "FREQ");
    h.set_double("CRPIX3", 1.0);
    h.set_double("CRVAL3", 1.3e9);
    h.set_double("CDELT3", 5e7);
    for (std::size_t c = 0; c < channels; ++c) {
      layout.frequencies_hz.push_back(1.3e9 + 5e7 * static_cast<double>(c));
      layout.channel_widths_hz.push_back(5e7);
    }
    std::vector<float> pixels;
    for (std::size_t c = 0; c < channels; ++c) pixels.insert(pixels.end(), img.pixels.begin(), img.pixels.end());
    const std::string path = tmp_.file(name);
    io::write_fits_cube(path, layout, pixels.data(), h, {}, io::WriteOptions{});
    return path;
  }
};

}  // namespace

TEST_F(CubeCli, IdenticalPlanesGetTheSinglePlaneResult) {
  const std::string dc = cube_of(dirty(), 3, "dirty-cube.fits"), pc = cube_of(psf(), 3, "psf-cube.fits");
  const auto one = run_gpuclean(tmp_, dirty() + " " + psf() + " -o " + tmp_.file("one.fits") + " --residual " +
                                          tmp_.file("one-res.fits") + " --device cpu --json " + tmp_.file("one.json"));
  ASSERT_EQ(one.code, 0) << one.err;
  const auto cube = run_gpuclean(tmp_, dc + " " + pc + " -o " + tmp_.file("cube.fits") + " --residual " +
                                           tmp_.file("cube-res.fits") + " --model " + tmp_.file("cube-model.fits") +
                                           " --device cpu --json " + tmp_.file("cube.json"));
  ASSERT_EQ(cube.code, 0) << cube.err;
  const io::FitsCube res = io::read_fits_cube(tmp_.file("cube-res.fits"));
  ASSERT_EQ(res.channels, 3u);
  ASSERT_EQ(res.frequencies_hz.size(), 3u);
  EXPECT_DOUBLE_EQ(res.frequencies_hz[2], 1.4e9);
  const io::FitsImage single = io::read_fits_image(tmp_.file("one-res.fits"));
  float peak = 0.0f;
  for (float v : single.pixels) peak = std::max(peak, std::abs(v));
  for (std::size_t c = 0; c < 3; ++c) {
    const float* p = res.plane(c, 0);
    for (std::size_t i = 0; i < single.pixels.size(); ++i) ASSERT_NEAR(p[i], single.pixels[i], 1e-5f * peak) << c << " " << i;
  }
  const auto js = nlohmann::json::parse(slurp(tmp_.file("cube.json")));
  const auto j1 = nlohmann::json::parse(slurp(tmp_.file("one.json")));
  EXPECT_EQ(app::summary_schema_problems(js), std::vector<std::string>{}) << js.dump(1);
  EXPECT_EQ(js["front_end"], "cube");
  ASSERT_EQ(js["planes"].size(), 3u);
  const double rms1 = j1["planes"][0]["rms_residual"].get<double>();
  for (const auto& p : js["planes"]) {
    EXPECT_EQ(js["runs"][p["run"].get<std::size_t>()]["iterations"], j1["runs"][0]["iterations"]);
    EXPECT_NEAR(p["rms_residual"].get<double>(), rms1, 1e-6 * rms1);
  }
  // One beam for identical planes: BMAJ in the header, no BEAMS table.
  const io::FitsCube restored = io::read_fits_cube(tmp_.file("cube.fits"));
  EXPECT_TRUE(restored.header.has("BMAJ"));
  EXPECT_TRUE(restored.beams.empty());
}

TEST_F(CubeCli, MismatchedCubesAndSettingsAreRefusedBeforeAnyWork) {
  const std::string d3 = cube_of(dirty(), 3, "d3.fits"), p2 = cube_of(psf(), 2, "p2.fits");
  const std::string out = tmp_.file("out.fits");
  auto r = run_gpuclean(tmp_, d3 + " " + p2 + " -o " + out + " --device cpu");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_FALSE(fs::exists(out));
  const std::string p3 = cube_of(psf(), 3, "p3.fits");
  for (const std::string& opts : {std::string("--fit-spectral-pol 2"), std::string("--join-polarizations"),
                                  std::string("--join-polarizations --multiscale"),
                                  std::string("--join-channels --algorithm hogbom"),
                                  std::string("--join-channels --fit-spectral-pol 2 --fit-spectral-log-pol 2"),
                                  std::string("--join-channels --fit-spectral-log-pol 9"),
                                  std::string("--join-channels --compare-select"),
                                  std::string("--save-source-list ") + tmp_.file("s.txt")}) {
    r = run_gpuclean(tmp_, d3 + " " + p3 + " -o " + out + " --device cpu " + opts);
    EXPECT_EQ(r.code, 2) << opts << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST_F(CubeCli, WscleanChannelsRoundTripWithTheirHeaders) {
  const std::string sim = tmp_.file("sim");
  auto r = run_gpuclean(tmp_, "simulate --size 96 --sources 6 --seed 4 --channels 4 --bandwidth 4e8 --name obs --out " + sim);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string out = tmp_.file("out");
  r = run_gpuclean(tmp_, sim + "/obs --wsclean-channels -o " + out + " --join-channels --fit-spectral-pol 2 "
                         "--device cpu --save-source-list " + tmp_.file("sources.txt") + " --json " + tmp_.file("s.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* ch : {"0000", "0001", "0002", "0003", "MFS"}) {
    for (const char* kind : {"image", "model", "residual"}) {
      const std::string path = out + "-" + ch + "-" + kind + ".fits";
      ASSERT_TRUE(fs::exists(path)) << path;
    }
  }
  // Every card of the channel's dirty image is kept (beam, units, provenance and the file's own
  // creation DATE are ours).
  const io::FitsImage in = io::read_fits_image(sim + "/obs-0002-dirty.fits");
  const io::FitsImage img = io::read_fits_image(out + "-0002-image.fits");
  for (const std::string& card : in.header.cards()) {
    const std::string key = io::FitsHeader::keyword_of(card);
    if (key == "BMAJ" || key == "BMIN" || key == "BPA" || key == "ORIGIN" || key == "BUNIT" || key == "DATE")
      continue;
    EXPECT_NE(std::find(img.header.cards().begin(), img.header.cards().end(), card), img.header.cards().end()) << card;
  }
  EXPECT_DOUBLE_EQ(*img.header.get_double("CRVAL3"), *in.header.get_double("CRVAL3"));
  EXPECT_TRUE(img.header.has("BMAJ"));
  const std::string list = slurp(tmp_.file("sources.txt"));
  EXPECT_EQ(list.rfind("Format = Name, Type, Ra, Dec, I, SpectralIndex, LogarithmicSI, ReferenceFrequency=", 0), 0u);
  EXPECT_NE(list.find(",POINT,"), std::string::npos);
  EXPECT_NE(list.find("],false,"), std::string::npos);
  const auto j = nlohmann::json::parse(slurp(tmp_.file("s.json")));
  EXPECT_EQ(app::summary_schema_problems(j), std::vector<std::string>{}) << j.dump(1);
  EXPECT_EQ(j["input"], "wsclean-channels");
  EXPECT_EQ(j["settings"]["join"], "channels");
  EXPECT_EQ(j["planes"].size(), 4u);
  ASSERT_EQ(j["runs"].size(), 1u);  // the channels joined: one CLEAN run of four planes
  EXPECT_EQ(j["runs"][0]["planes"], nlohmann::json::array({0, 1, 2, 3}));
  EXPECT_EQ(j["weights"], "WSCIMGWG");
  // Outputs exist: a second run without --overwrite is refused before any work.
  r = run_gpuclean(tmp_, sim + "/obs --wsclean-channels -o " + out + " --device cpu");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

// The MFS images carry the whole header of NAME-MFS-dirty.fits (WCS, band, observation), as the
// channels carry theirs: without it DS9, CASA and astropy show no coordinates. Without an MFS
// dirty image the header is channel 0's with the band's centre and width.
TEST_F(CubeCli, MfsOutputsKeepTheMfsDirtyHeader) {
  const std::string sim = tmp_.file("sim");
  auto r = run_gpuclean(tmp_, "simulate --size 64 --sources 4 --seed 8 --channels 3 --bandwidth 3e8 --freq 1.4e9 "
                              "--name obs --out " + sim);
  ASSERT_EQ(r.code, 0) << r.err;
  {  // RADESYS as WSClean's headers may hold it (the simulator leaves it to EQUINOX)
    io::FitsImage mfs = io::read_fits_image(sim + "/obs-MFS-dirty.fits");
    mfs.header.set_string("RADESYS", "FK5");
    io::WriteOptions w;
    w.overwrite = true;
    io::write_fits_image(sim + "/obs-MFS-dirty.fits", mfs.pixels.data(), mfs.width, mfs.height, mfs.header, mfs.axes, w);
  }
  const io::FitsImage in = io::read_fits_image(sim + "/obs-MFS-dirty.fits");
  const std::string out = tmp_.file("out");
  r = run_gpuclean(tmp_, sim + "/obs --wsclean-channels -o " + out + " --join-channels --device cpu --niter 200");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* kind : {"image", "model", "residual"}) {
    SCOPED_TRACE(kind);
    const io::FitsImage img = io::read_fits_image(out + "-MFS-" + kind + ".fits");
    for (const char* key : {"CTYPE1", "CTYPE2", "CTYPE3", "CRVAL1", "CRVAL2", "CRVAL3", "CDELT1", "CDELT2", "CRPIX1",
                            "CRPIX2", "RADESYS", "DATE-OBS", "TELESCOP", "OBJECT", "EQUINOX", "WSCIMGWG"})
      EXPECT_TRUE(img.header.has(key)) << key;
    for (const std::string& card : in.header.cards()) {
      const std::string key = io::FitsHeader::keyword_of(card);
      if (key == "BMAJ" || key == "BMIN" || key == "BPA" || key == "ORIGIN" || key == "BUNIT" || key == "DATE")
        continue;
      EXPECT_NE(std::find(img.header.cards().begin(), img.header.cards().end(), card), img.header.cards().end()) << card;
    }
    EXPECT_EQ(img.header.get_string("CTYPE3").value_or(""), "FREQ");
    EXPECT_DOUBLE_EQ(img.header.get_double("CRVAL3").value_or(0.0), 1.4e9);  // the MFS frequency, not a channel's
    EXPECT_DOUBLE_EQ(img.header.get_double("CDELT3").value_or(0.0), 3e8);
  }

  // No MFS dirty image: channel 0's header, with the band's centre and width.
  for (const char* f : {"obs-MFS-dirty.fits", "obs-MFS-psf.fits"}) fs::remove(sim + "/" + f);
  const std::string out2 = tmp_.file("out2");
  r = run_gpuclean(tmp_, sim + "/obs --wsclean-channels -o " + out2 + " --join-channels --device cpu --niter 200");
  ASSERT_EQ(r.code, 0) << r.err;
  const io::FitsImage c0 = io::read_fits_image(sim + "/obs-0000-dirty.fits");
  const io::FitsImage c2 = io::read_fits_image(sim + "/obs-0002-dirty.fits");
  const io::FitsImage img = io::read_fits_image(out2 + "-MFS-image.fits");
  for (const char* key : {"CTYPE1", "CTYPE2", "CTYPE3", "CRVAL1", "CRVAL2", "CDELT1", "CDELT2", "CRPIX1", "CRPIX2",
                          "DATE-OBS", "TELESCOP"})
    EXPECT_EQ(img.header.get_string(key), c0.header.get_string(key)) << key;
  const double lo = *c0.header.get_double("CRVAL3"), hi = *c2.header.get_double("CRVAL3");
  EXPECT_NEAR(*img.header.get_double("CRVAL3"), 1.4e9, 1.0);
  EXPECT_NEAR(*img.header.get_double("CRVAL3"), 0.5 * (lo + hi), 1.0);
  EXPECT_NEAR(*img.header.get_double("CDELT3"), 3e8, 1.0);
  EXPECT_DOUBLE_EQ(*img.header.get_double("WSCCHANE"), *c2.header.get_double("WSCCHANE"));
}

TEST_F(CubeCli, BatchTakesAChannelSetAsOneObservation) {
  const std::string dir = tmp_.file("folder");
  auto r = run_gpuclean(tmp_, "simulate --size 64 --sources 4 --seed 5 --channels 3 --bandwidth 3e8 --name obs --out " + dir);
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_gpuclean(tmp_, "batch " + dir + " --device cpu --report " + tmp_.file("report.json"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(slurp(tmp_.file("report.json")));
  EXPECT_EQ(app::summary_schema_problems(j), std::vector<std::string>{}) << j.dump(1);
  ASSERT_EQ(j["observations"].size(), 1u) << j.dump(1);
  EXPECT_EQ(j["observations"][0]["name"], "obs");
  EXPECT_EQ(j["observations"][0]["input"], "wsclean-channels");
  EXPECT_EQ(j["observations"][0]["planes"].size(), 3u);
  for (const char* f : {"obs-0000-image.fits", "obs-0002-residual.fits", "obs-MFS-image.fits"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;
  EXPECT_FALSE(fs::exists(dir + "/obs-0000-image-model.fits"));
}

TEST_F(CubeCli, JoinedMultiscaleWritesGaussianSourcesWithTheirSpectra) {
  const std::string sim = tmp_.file("sim");
  auto r = run_gpuclean(tmp_, "simulate --size 128 --sources 6 --gaussians 3 --gaussian-size 3 5 --seed 6 --channels 4 "
                              "--bandwidth 4e8 --spectral-index -1 -0.5 --name obs --out " + sim);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string out = tmp_.file("out");
  r = run_gpuclean(tmp_, sim + "/obs --wsclean-channels -o " + out + " --join-channels --multiscale "
                         "--fit-spectral-log-pol 2 --niter 3000 --device cpu --save-source-list " + tmp_.file("sources.txt") +
                         " --components " + tmp_.file("comps.csv") + " --json " + tmp_.file("s.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string list = slurp(tmp_.file("sources.txt"));
  EXPECT_NE(list.find(",GAUSSIAN,"), std::string::npos) << list.substr(0, 2000);
  EXPECT_NE(list.find(",POINT,"), std::string::npos);
  EXPECT_NE(list.find("],true,"), std::string::npos) << "a logarithmic fit's source list says LogarithmicSI = true";
  EXPECT_EQ(list.find("],false,"), std::string::npos);
  const std::string comps = slurp(tmp_.file("comps.csv"));
  EXPECT_EQ(comps.rfind("channel,stokes,frequency_hz,x,y,ra_deg,dec_deg,flux_jy,scale_pixels\n", 0), 0u);
  const auto j = nlohmann::json::parse(slurp(tmp_.file("s.json")));
  EXPECT_EQ(j["settings"]["fit_spectral_log_pol"], 2);
  ASSERT_TRUE(j["runs"][0].contains("scales"));
  EXPECT_GT(j["runs"][0]["scales"].size(), 1u);
  const io::FitsImage img = io::read_fits_image(out + "-0001-image.fits");
  EXPECT_TRUE(img.header.has("GCSCALES"));
  EXPECT_EQ(*img.header.get_double("GCFITLPL"), 2.0);
}

TEST_F(CubeCli, CompareSelectOnAJoinedRun) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << gpuclean::cuda::describe_device();
  const std::string sim = tmp_.file("sim");
  auto r = run_gpuclean(tmp_, "simulate --size 128 --sources 8 --seed 7 --channels 4 --bandwidth 4e8 --name obs --out " + sim);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string out = tmp_.file("out");
  r = run_gpuclean(tmp_, sim + "/obs --wsclean-channels -o " + out + " --join-channels --compare-select --device gpu");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* ext : {".csv", ".json", ".png"}) EXPECT_TRUE(fs::exists(out + "-select" + ext)) << ext;
  EXPECT_NE(slurp(out + "-select.csv").find("cycle,n,k,count,backend,seconds,speedup_over_sort"), std::string::npos);
}

// `gpuclean image` end to end: the binary (GPUCLEAN_BINARY) against Debian's WSClean 3.1 on the
// same simulated MS and options (`-use-wgridder -no-small-inversion -niter 0 -make-psf`): every
// file WSClean writes is written, its pixels agree to 1e-4 of the peak, and its header cards
// (WCS, frequency, beam, WSC* counters) agree; bad command lines fail with one line, before any
// output exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "app/image/image_args.hpp"
#include "io/fits_reader.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean {
namespace {

using test::TempDir;

constexpr double kPixelTolerance = 1e-4;  // max |Δ| / peak (plan §6)
// BMAJ, BMIN relative. On this MS WSClean 3.1's fitter stops at its 500-iteration cap off the
// least-squares minimum, where the PSFs' last digits move it; with the same solver (GSL's lmsder,
// issue 45) the worst measured is 9.5e-4 (it was 1.5 % with gpuclean's own Levenberg–Marquardt).
constexpr double kBeamTolerance = 0.005;
constexpr double kBpaTolerance = 0.5;     // degrees
constexpr double kCountTolerance = 1e-6;  // WSCIMGWG, WSCVWSUM, WSCENVIS relative

std::string make_ms(const TempDir& dir) {
  const std::string ms = dir.file("a.ms");
  test::run_python(dir, test::source_dir() + "/data/simulate_ms.py --out " + ms +
                            " --sky points --antennas 16 --hours 2 --integration 600 --channels 2 --noise 0");
  return ms;
}

double card(const io::FitsImage& f, const char* key) {
  const auto v = f.header.get_double(key);
  EXPECT_TRUE(v.has_value()) << key;
  return v.value_or(NAN);
}

/// Compares one of WSClean's files with ours; returns max |Δ| / peak.
double compare_file(const std::string& theirs_path, const std::string& ours_path, bool beam_expected) {
  const io::FitsImage theirs = io::read_fits_image(theirs_path), ours = io::read_fits_image(ours_path);
  EXPECT_EQ(ours.axes, theirs.axes) << ours_path;
  double peak = 0, diff = 0;
  for (std::size_t i = 0; i < theirs.pixels.size() && i < ours.pixels.size(); ++i) {
    peak = std::max(peak, std::abs(double{theirs.pixels[i]}));
    diff = std::max(diff, std::abs(double{ours.pixels[i]} - theirs.pixels[i]));
  }
  for (const char* key : {"CRPIX1", "CRPIX2", "CRPIX3", "CRVAL4", "WSCNVIS", "WSCFIELD", "WSCNITER"})
    EXPECT_EQ(card(ours, key), card(theirs, key)) << key << " " << ours_path;
  for (const char* key : {"WSCCHANS", "WSCCHANE"}) {  // only with -channel-range, and not on the MFS
    EXPECT_EQ(ours.header.has(key), theirs.header.has(key)) << key << " " << ours_path;
    if (theirs.header.has(key)) {
      EXPECT_EQ(card(ours, key), card(theirs, key)) << key << " " << ours_path;
    }
  }
  for (const char* key : {"CRVAL1", "CRVAL2", "CDELT1", "CDELT2", "CRVAL3", "CDELT3"})
    EXPECT_NEAR(card(ours, key), card(theirs, key), 1e-12 * std::abs(card(theirs, key))) << key << " " << ours_path;
  for (const char* key : {"WSCIMGWG", "WSCNORMF", "WSCVWSUM", "WSCENVIS"})
    EXPECT_NEAR(card(ours, key), card(theirs, key), kCountTolerance * card(theirs, key)) << key << " " << ours_path;
  for (const char* key : {"CTYPE1", "CTYPE2", "CTYPE3", "CTYPE4", "BUNIT", "WSCWEIGH", "WSCDATAC", "OBJECT", "TELESCOP"})
    EXPECT_EQ(ours.header.get_string(key), theirs.header.get_string(key)) << key << " " << ours_path;
  if (beam_expected) {
    EXPECT_GT(card(theirs, "BMAJ"), 0);
    std::printf("%s: BMAJ %+.2e, BMIN %+.2e relative, BPA %+.3f deg\n", ours_path.substr(ours_path.rfind('/') + 1).c_str(),
                card(ours, "BMAJ") / card(theirs, "BMAJ") - 1, card(ours, "BMIN") / card(theirs, "BMIN") - 1,
                card(ours, "BPA") - card(theirs, "BPA"));
    EXPECT_NEAR(card(ours, "BMAJ"), card(theirs, "BMAJ"), kBeamTolerance * card(theirs, "BMAJ")) << ours_path;
    EXPECT_NEAR(card(ours, "BMIN"), card(theirs, "BMIN"), kBeamTolerance * card(theirs, "BMIN")) << ours_path;
    EXPECT_NEAR(card(ours, "BPA"), card(theirs, "BPA"), kBpaTolerance) << ours_path;
  }
  return diff / peak;
}

/// Runs both with `options` and compares every file WSClean wrote; returns the largest difference.
/// `copies` > 1: the MS and copies of it, all given (several MSs: their samples add up).
double compare_runs(const std::string& options, std::size_t channels_out, int copies = 1) {
  TempDir dir;
  std::string ms = make_ms(dir);
  for (int c = 1; c < copies; ++c) {
    const std::string copy = dir.file("copy" + std::to_string(c) + ".ms");
    std::filesystem::copy(dir.file("a.ms"), copy, std::filesystem::copy_options::recursive);
    ms += " " + copy;
  }
  const std::string common = "-niter 0 -make-psf -no-small-inversion -size 128 128 -scale 4asec -channels-out " +
                             std::to_string(channels_out) + " " + options + " ";
  const test::CommandResult w =
      test::run_command(dir, "wsclean -use-wgridder -j 2 " + common + "-name " + dir.file("wsc") + " " + ms);
  EXPECT_EQ(w.code, 0) << w.err;
  const test::CommandResult g = test::run_gpuclean(dir, "image -j 2 " + common + "-name " + dir.file("gpc") + " " + ms);
  EXPECT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(g.err, "");
  std::vector<std::string> tags;
  if (channels_out == 1) tags = {""};
  else tags = {"-0000", "-0001", "-MFS"};
  double worst = 0;
  for (const std::string& tag : tags)
    for (const char* kind : {"dirty", "image", "psf"}) {
      const std::string suffix = tag + "-" + kind + ".fits";
      EXPECT_TRUE(std::filesystem::exists(dir.file("gpc" + suffix))) << suffix;
      if (!std::filesystem::exists(dir.file("gpc" + suffix))) continue;
      const double d = compare_file(dir.file("wsc" + suffix), dir.file("gpc" + suffix), true);
      std::printf("%s %s: %.2e of peak\n", options.c_str(), suffix.c_str(), d);
      worst = std::max(worst, d);
    }
  // Nothing WSClean did not write (its -image.fits with niter 0 included).
  std::size_t ours = 0, theirs = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string n = e.path().filename().string();
    ours += n.rfind("gpc-", 0) == 0;
    theirs += n.rfind("wsc-", 0) == 0;
  }
  EXPECT_EQ(ours, theirs);
  return worst;
}

TEST(ImageCli, NaturalAsWsclean) { EXPECT_LE(compare_runs("-weight natural", 1), kPixelTolerance); }
// WSClean's uv range, Tukey and edge tapers of the weight grid, and its row selections (issue 44).
TEST(ImageCli, UvRangeAndTukeyTapersAsWsclean) {
  EXPECT_LE(compare_runs("-weight briggs 0 -weighting-rank-filter 0 -minuv-l 600 -maxuv-l 15000 -taper-tukey 3000 "
                         "-taper-inner-tukey 800",
                         1),
            kPixelTolerance);
}
TEST(ImageCli, EdgeTapersAsWsclean) {
  EXPECT_LE(compare_runs("-weight uniform -weighting-rank-filter 0 -taper-edge 2000 -taper-edge-tukey 3000", 1),
            kPixelTolerance);
}
// -intervals-out: each interval imaged as a run of its own, NAME-t000i-..., as WSClean.
TEST(ImageCli, IntervalsOutAsWsclean) {
  TempDir dir;
  const std::string ms = make_ms(dir);
  const std::string common = "-niter 0 -make-psf -no-small-inversion -size 128 128 -scale 4asec -intervals-out 3 ";
  const test::CommandResult w =
      test::run_command(dir, "wsclean -use-wgridder -j 2 " + common + "-name " + dir.file("wsc") + " " + ms);
  ASSERT_EQ(w.code, 0) << w.err;
  const test::CommandResult g = test::run_gpuclean(dir, "image -j 2 " + common + "-name " + dir.file("gpc") + " " + ms);
  ASSERT_EQ(g.code, 0) << g.err;
  for (const char* t : {"-t0000", "-t0001", "-t0002"})
    for (const char* kind : {"dirty", "psf"}) {
      const std::string suffix = std::string(t) + "-" + kind + ".fits";
      ASSERT_TRUE(std::filesystem::exists(dir.file("gpc" + suffix))) << suffix;
      // A third of the track gives an elongated PSF, whose beam fit stops at WSClean's iteration cap:
      // measured within 3.2e-4 with the same solver (4.9 % before issue 45).
      EXPECT_LE(compare_file(dir.file("wsc" + suffix), dir.file("gpc" + suffix), kind == std::string("psf")),
                kPixelTolerance)
          << suffix;
    }
  EXPECT_FALSE(std::filesystem::exists(dir.file("gpc-dirty.fits")));
}
TEST(ImageCli, RowSelectionsAsWsclean) {
  EXPECT_LE(compare_runs("-weight natural -minuvw-m 200 -maxuvw-m 4000 -interval 1 9 -odd-timesteps", 1), kPixelTolerance);
}
TEST(ImageCli, UniformAsWsclean) { EXPECT_LE(compare_runs("-weight uniform", 1), kPixelTolerance); }
// Briggs without the rank filter: 3.1's Briggs rule (empty cells 1) then equals 3.6's (plan §3).
TEST(ImageCli, Briggs0AsWsclean) {
  EXPECT_LE(compare_runs("-weight briggs 0 -weighting-rank-filter 0", 1), kPixelTolerance);
}
TEST(ImageCli, TwoChannelsAndMfsAsWsclean) { EXPECT_LE(compare_runs("-weight uniform", 2), kPixelTolerance); }
TEST(ImageCli, Briggs0TwoChannelsAsWsclean) {
  EXPECT_LE(compare_runs("-weight briggs 0 -weighting-rank-filter 0", 2), kPixelTolerance);
}

// The options that change weights, channels or polarisation (plan §6's list).
TEST(ImageCli, TaperAsWsclean) { EXPECT_LE(compare_runs("-weight uniform -taper-gaussian 20asec", 1), kPixelTolerance); }
TEST(ImageCli, PaddingAsWsclean) { EXPECT_LE(compare_runs("-weight uniform -padding 1.5", 1), kPixelTolerance); }
TEST(ImageCli, ChannelRangeAsWsclean) { EXPECT_LE(compare_runs("-weight natural -channel-range 1 2", 1), kPixelTolerance); }
TEST(ImageCli, MfWeightingAsWsclean) { EXPECT_LE(compare_runs("-weight uniform -mf-weighting", 2), kPixelTolerance); }
TEST(ImageCli, TwoMeasurementSetsAsWsclean) { EXPECT_LE(compare_runs("-weight uniform", 1, 2), kPixelTolerance); }
TEST(ImageCli, PolXxAsWsclean) { EXPECT_LE(compare_runs("-weight natural -pol xx", 1), kPixelTolerance); }

struct BadCase {
  std::string args;  ///< after "image", before the MS; {ms} is replaced by the MS path
  int code;
  std::string says;  ///< a part of the one stderr line
};

TEST(ImageCli, BadCommandLinesFailBeforeAnyOutput) {
  TempDir dir;
  const std::string ms = make_ms(dir);
  const std::string base = "-size 64 64 -scale 4asec -name " + dir.file("out") + " ";
  const std::vector<BadCase> cases = {
      {base + "-bogus 1 {ms}", 2, "unknown option -bogus"},
      {base + "-scale 1parsec {ms}", 2, "unknown unit 'parsec'"},
      {base + "-scale 0 {ms}", 2, "-scale must be positive"},
      {"-size 0 0 -scale 1asec {ms}", 2, "-size 0 must be at least 2"},
      {base + "-weight briggs", 2, "-weight needs 2 values"},
      {base + "-weight briggs x {ms}", 2, "-weight briggs 'x' is not a number"},
      {base + "-weight super {ms}", 2, "natural, uniform or briggs R"},
      {base + "-pol xy {ms}", 2, "XY and YX are imaged together"},
      {base + "-pol u {ms}", 3, "Stokes U needs a U correlation, XY and YX, or RL and LR"},
      {base + "-channels-out 5 {ms}", 2, "more than the 2 selected channels"},
      {base + "-channel-range 1 1 {ms}", 2, "is empty"},
      {base, 2, "no MeasurementSet given"},
      {"-scale 1asec {ms}", 2, "-size W H is required"},
      {base + "-field 7 {ms}", 3, "7"},
      {base + "-data-column CORRECTED_DATA {ms}", 3, "CORRECTED_DATA"},
      {base + dir.file("nothing.ms"), 3, "nothing.ms' does not exist"},
      {"-size 64 64 -scale 4asec -name " + dir.file("no/such/folder/out") + " {ms}", 4, "does not exist"},
      {base + "-device tpu {ms}", 2, "-device 'tpu' is not one of auto, gpu, cpu"},
  };
  for (const BadCase& c : cases) {
    std::string args = c.args;
    if (const auto at = args.find("{ms}"); at != std::string::npos) args.replace(at, 4, ms);
    const test::CommandResult r = test::run_gpuclean(dir, "image " + args);
    EXPECT_EQ(r.code, c.code) << args << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      EXPECT_NE(e.path().filename().string().rfind("out", 0), 0u) << args << " left " << e.path();
  }
}

// Issue 45: an MS that gpuclean cannot read (a storage manager casacore cannot load, a missing
// subtable, a moving or varying phase centre, no MS at all) is refused with one line on stderr that
// names the MS and the table or column, exit code 3, before any output is written.
TEST(ImageCli, AnUnreadableMeasurementSetGetsOneLine) {
  TempDir dir;
  struct Case {
    std::string edit;     ///< ms_fixture.py edit's options; empty: `ms` is the path as given
    std::string options;  ///< before the MS
    std::vector<std::string> says;
  };
  const std::string folder = dir.file("folder"), file = dir.file("file.ms");
  std::filesystem::create_directory(folder);
  std::ofstream(file) << "not a table";
  const std::vector<Case> cases = {
      {"--storage-manager LofarStMan", "", {"column DATA", "LofarStMan", "liblofarstman.so"}},
      {"--storage-manager LofarStMan", "-intervals-out 2 ", {"column DATA", "LofarStMan"}},  // counts timesteps first
      {"--field-storage-manager NoSuchStMan", "", {"column NAME of its FIELD subtable", "NoSuchStMan"}},
      {"--remove-subtable SPECTRAL_WINDOW", "", {"lacks its SPECTRAL_WINDOW subtable"}},
      {"--remove-subtable-keyword POLARIZATION", "", {"no POLARIZATION subtable"}},
      {"--remove-subtable-file FIELD", "", {"lacks its FIELD subtable"}},
      {"--ephemeris-id", "", {"FIELD subtable", "EPHEM0"}},
      {"--moving-centre 1e-6", "", {"field 0 (SIM)", "PHASE_DIR", "NUM_POLY 1"}},
      {"--second-field", "-field all ", {"fields 0 (SIM) and 1 (OTHER)", "FIELD PHASE_DIR", "-field"}},
      {"--second-field", "-field 0,1 ", {"fields 0 (SIM) and 1 (OTHER)", "FIELD PHASE_DIR", "-field"}},
      {"", "", {"does not exist"}},
      {"", "", {"is a folder but not a casacore table"}},
      {"", "", {"is a file, not a MeasurementSet"}},
  };
  const std::vector<std::string> paths = {dir.file("absent.ms"), folder, file};
  std::string name = "a.ms";
  std::size_t given = 0;
  for (const Case& c : cases) {
    ++name[0];  // b.ms, c.ms, ...
    const std::string ms = c.edit.empty() ? paths.at(given++) : test::make_ms(dir, name, c.edit);
    const std::string args =
        "image -niter 0 -size 128 128 -scale 10asec -name " + dir.file("out") + " " + c.options + ms;
    SCOPED_TRACE(args);
    const test::CommandResult r = test::run_gpuclean(dir, args);
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("gpuclean: error: '" + ms + "'", 0), 0u) << r.err;  // the MS first
    for (const std::string& part : c.says) EXPECT_NE(r.err.find(part), std::string::npos) << part << ": " << r.err;
    EXPECT_EQ(r.out, "");
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      EXPECT_NE(e.path().filename().string().rfind("out", 0), 0u) << "left " << e.path();
  }
  // The fixtures change nothing else: with the field chosen, the same MS images.
  const std::string two = test::make_ms(dir, "two.ms", "--second-field");
  EXPECT_EQ(test::run_gpuclean(dir, "image -niter 0 -size 128 128 -scale 10asec -name " + dir.file("ok") + " -field 1 " +
                                        two).code, 0);
}

TEST(ImageCli, AFailedOutputLeavesNone) {
  // All or nothing: the last file failing to stage (as a full disk would) leaves no output at all.
  TempDir dir;
  const std::string ms = make_ms(dir);
  const test::CommandResult r = test::run_command(
      dir, "GPUCLEAN_TEST_FAIL_OUTPUT=out-MFS-psf.fits " + test::binary_path() +
               " image -size 64 64 -scale 4asec -make-psf -channels-out 2 -name " + dir.file("out") + " " + ms);
  EXPECT_EQ(r.code, 4) << r.err;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_NE(e.path().filename().string().rfind("out", 0), 0u) << "left " << e.path();
}

TEST(ImageCli, TooLittleMemoryIsRefusedBeforeTheRead) {
  // The memory plan is checked before any visibility is read (what -size alone needs before the
  // MS is opened, the selection's after its metadata): a host "with" 10 kB (the seam stands for
  // MemAvailable) is refused, exit 4, one line, nothing written. tests/app/test_image_checks_first.cpp
  // has the selection's refusal on a large MS.
  TempDir dir;
  const std::string ms = make_ms(dir);
  const std::string run = " image -size 64 64 -scale 4asec -make-psf -device cpu -name " + dir.file("out") + " " + ms;
  const test::CommandResult r = test::run_command(dir, "GPUCLEAN_TEST_HOST_MEMORY=1e4 " + test::binary_path() + run);
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("-size 64 64 needs at least 0.00 GiB of host memory before any visibility"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("and 0.00 GiB is available; give a smaller -size"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_NE(e.path().filename().string().rfind("out", 0), 0u) << "left " << e.path();
  // With enough memory the same run works and prints its plan and timings on stdout.
  const test::CommandResult ok = test::run_command(dir, "GPUCLEAN_TEST_HOST_MEMORY=1e12 " + test::binary_path() + run);
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("gpuclean image: memory: host "), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("gpuclean image: timings read="), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("inversions=2 "), std::string::npos) << ok.out;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().filename().string().rfind("out", 0) == 0) return;
  ADD_FAILURE() << "the run with enough memory wrote nothing";
}

TEST(ImageCli, ParsesWsCleanValues) {
  const app::ImageOptions o = app::parse_image_args({"-size", "300", "200", "-scale", "0.01", "-weight", "briggs", "-0.5",
                                                     "--taper-gaussian", "20", "-channels-out", "3", "-padding", "1.5",
                                                     "-channel-range", "1", "7", "-field", "2", "-make-psf", "a.ms", "b.ms"});
  EXPECT_EQ(o.run.image.width, 300u);
  EXPECT_EQ(o.run.image.height, 200u);
  EXPECT_DOUBLE_EQ(o.run.image.scale, 0.01 * M_PI / 180);  // -scale: degrees by default
  EXPECT_EQ(o.run.weighting.mode, imaging::WeightMode::kBriggs);
  EXPECT_EQ(o.run.weighting.briggs_robustness, -0.5);
  EXPECT_DOUBLE_EQ(o.run.weighting.gaussian_taper_fwhm_rad, 20 * M_PI / 180 / 3600);  // arcseconds by default
  EXPECT_EQ(o.run.channels_out, 3u);
  EXPECT_EQ(o.run.padding, 1.5);
  EXPECT_EQ(o.selection.channel_begin, 1u);
  EXPECT_EQ(o.selection.channel_end, 7u);
  EXPECT_EQ(o.selection.fields, std::vector<int>{2});
  EXPECT_TRUE(o.run.make_psf);
  EXPECT_EQ(o.ms, (std::vector<std::string>{"a.ms", "b.ms"}));
  EXPECT_EQ(app::parse_image_args({"-size", "8", "8", "-scale", "1asec", "x.ms"}).run.weighting.mode,
            imaging::WeightMode::kUniform);  // WSClean's default
}

TEST(ImageCli, HelpListsTheOptions) {
  TempDir dir;
  const test::CommandResult r = test::run_gpuclean(dir, "image -help");
  EXPECT_EQ(r.code, 0);
  for (const char* o : {"-size", "-scale", "-weight", "-channels-out", "-make-psf", "-taper-gaussian"})
    EXPECT_NE(r.out.find(o), std::string::npos) << o;
}

}  // namespace
}  // namespace gpuclean

// The restoring beam (BMAJ/BMIN/BPA) of `gpuclean image -make-psf` against Debian's WSClean 3.1.
//
// WSClean fits its beam to one quadrant of a box around the PSF's centre (a size_t wrap-around
// hides the rest) with GSL's lmsder and a Jacobian with two terms of the wrong sign: on elongated
// PSFs the problem is near-degenerate, the fit often stops at its 500-iteration cap, and where it
// stops depends on the solver's path (issue 45: a GMRT snapshot, 139.7″ × 5.60″ against WSClean's
// 73.6″ × 12.98″). gpuclean walks the same path (GSL's lmsder step by step, clean/beam_lmsder.cpp;
// bitwise equal to GSL 2.7 on WSClean's own PSF files), so what is left is what the PSFs differ by
// (≤ 1.2e-5 of the peak), amplified by those fits: ≤ 8.8e-5 on the cases here (each test's measured
// worst is beside it). Left out for their time (seconds a program): 512² at 1″ of the MeerKAT cases,
// where the fits run into the cap (≤ 2.3e-4 measured), and the low-declination track with
// -beam-fitting-size 20 (1.4e-3); on those WSClean's own beam moves by up to 3.5e-3 between two
// runs with -j 2 (its PSF is not bitwise reproducible across threads).
//
// Issue 36's MS (32 antennas, 1 h of 300 s, 2 channels; 512² at 2″): channel 0's PSF has sidelobes
// of 0.48 eight pixels from the peak, on which the fit once diverged (BMAJ 23689°, WSClean 17.42″).
// Then PSFs that are hard to fit, each with natural, uniform and Briggs 0 weighting and the
// -circular-beam / -beam-fitting-size variants: a GMRT-like Y snapshot, an east–west line (WSRT-like,
// 2 h at +30°: a fan beam), a MeerKAT snapshot of 8 antennas, and a 16-antenna MeerKAT track at +25°.
// Each program run takes under a second.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/fits_reader.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean {
namespace {

using test::TempDir;

double card(const io::FitsImage& f, const char* key) {
  const auto v = f.header.get_double(key);
  EXPECT_TRUE(v.has_value()) << key;
  return v.value_or(NAN);
}

// Both programs on `ms` with `options`; each file's BMAJ and BMIN within `relative` of WSClean's,
// BPA within `bpa_deg` (modulo 180°: an axis).
void compare_beams(const TempDir& dir, const std::string& ms, const std::string& options,
                   const std::vector<std::string>& tags, double relative, double bpa_deg) {
  const std::string common = "-niter 0 -make-psf -no-small-inversion " + options + " ";
  const test::CommandResult w =
      test::run_command(dir, "wsclean -use-wgridder -j 2 " + common + "-name " + dir.file("wsc") + " " + ms);
  ASSERT_EQ(w.code, 0) << w.err;
  const test::CommandResult g = test::run_gpuclean(dir, "image -j 2 " + common + "-name " + dir.file("gpc") + " " + ms);
  ASSERT_EQ(g.code, 0) << g.err;
  for (const std::string& tag : tags) {
    const std::string suffix = tag + "-psf.fits";
    const io::FitsImage theirs = io::read_fits_image(dir.file("wsc" + suffix));
    const io::FitsImage ours = io::read_fits_image(dir.file("gpc" + suffix));
    const double bmaj = card(theirs, "BMAJ"), bmin = card(theirs, "BMIN");
    const double dpa = std::remainder(card(ours, "BPA") - card(theirs, "BPA"), 180.0);
    std::printf("%s %s: WSClean %.3f\" x %.3f\" %.3f deg; BMAJ %+.1e, BMIN %+.1e relative, BPA %+.4f deg\n",
                options.c_str(), suffix.c_str(), bmaj * 3600, bmin * 3600, card(theirs, "BPA"),
                card(ours, "BMAJ") / bmaj - 1, card(ours, "BMIN") / bmin - 1, dpa);
    EXPECT_NEAR(card(ours, "BMAJ"), bmaj, relative * bmaj) << options << suffix;
    EXPECT_NEAR(card(ours, "BMIN"), bmin, relative * bmin) << options << suffix;
    EXPECT_NEAR(dpa, 0.0, bpa_deg) << options << suffix;
  }
}

// Issue 36's MS. Measured ≤ 4.1e-6 relative, BPA ≤ 0.0001°, per channel and MFS (before: 1.6e-6).
void compare_issue36(const std::string& weighting) {
  TempDir dir;
  const std::string ms = dir.file("a.ms");
  test::run_python(dir, test::source_dir() + "/data/simulate_ms.py --out " + ms +
                            " --sky single --antennas 32 --hours 1 --integration 300 --channels 2 --noise 0");
  compare_beams(dir, ms, "-size 512 512 -scale 2asec -channels-out 2 " + weighting, {"-0000", "-0001", "-MFS"}, 1e-4,
                0.01);
}

TEST(ImageBeamVsWsclean, Briggs0) { compare_issue36("-weight briggs 0 -weighting-rank-filter 0"); }
TEST(ImageBeamVsWsclean, Uniform) { compare_issue36("-weight uniform"); }

// One channel's beam on an MS of tests/app/make_array_ms.py (`array`) or data/simulate_ms.py.
struct Case {
  std::string options;
  double relative, bpa_deg;
};

void compare_cases(const std::string& make_ms, const std::string& size, const std::string& scale,
                   const std::vector<Case>& cases) {
  TempDir dir;
  const std::string ms = dir.file("a.ms");
  test::run_python(dir, test::source_dir() + make_ms + " --out " + ms);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.options);
    compare_beams(dir, ms, "-size " + size + " " + size + " -scale " + scale + " -weighting-rank-filter 0 " + c.options,
                  {""}, c.relative, c.bpa_deg);
  }
}

// 30 antennas in a Y, one 60-s integration at 622 MHz (as issue 45's GMRT snapshot): measured
// ≤ 3.1e-6, BPA ≤ 0.0004° (before: BMIN −29 %, BPA 41° off).
TEST(ImageBeamVsWsclean, GmrtLikeSnapshot) {
  compare_cases("/tests/app/make_array_ms.py --layout gmrt --hours 0.0167 --integration 60 --freq 622e6 --dec 20",
                "512", "1asec",
                {{"-weight natural", 1e-4, 0.01},
                 {"-weight uniform", 1e-4, 0.01},
                 {"-weight briggs 0", 1e-4, 0.01},
                 {"-weight natural -circular-beam", 1e-4, 0.01},
                 {"-weight uniform -beam-fitting-size 4", 1e-4, 0.01},
                 {"-weight natural -beam-fitting-size 2.5", 1e-4, 0.01}});
}

// 14 antennas on an east–west line, 2 h at +30°: a fan beam 2–5 × longer than wide, whose fit grows
// its box to the whole image. Measured ≤ 2.8e-5 (uniform), BPA ≤ 0.0004° (before: BMAJ 4.5 × WSClean's).
TEST(ImageBeamVsWsclean, EastWestArray) {
  compare_cases("/tests/app/make_array_ms.py --layout ew --hours 2 --integration 300 --dec 30", "512", "5asec",
                {{"-weight natural", 1e-3, 0.01},
                 {"-weight uniform", 1e-3, 0.01},
                 {"-weight briggs 0", 1e-3, 0.01},
                 {"-weight natural -circular-beam", 1e-3, 0.01},
                 {"-weight briggs 0 -beam-fitting-size 20", 1e-3, 0.01},
                 {"-weight natural -beam-fitting-size 2.5", 1e-3, 0.01}});
}

// MeerKAT, 8 antennas, 3 min; 256² at 2″ (512² at 1″ takes seconds a program, see above).
// Measured ≤ 8.3e-5 (natural), BPA ≤ 0.004° (before: about the same; at 1″ BMIN −6 %).
TEST(ImageBeamVsWsclean, MeerkatSnapshot) {
  compare_cases("/data/simulate_ms.py --sky single --antennas 8 --hours 0.05 --integration 60 --channels 1 "
                "--noise 0 --bandwidth 1e6 --correlations i",
                "256", "2asec",
                {{"-weight natural", 1e-3, 0.02},
                 {"-weight uniform", 1e-3, 0.02},
                 {"-weight briggs 0", 1e-3, 0.02},
                 {"-weight natural -circular-beam", 1e-3, 0.02},
                 {"-weight uniform -beam-fitting-size 4", 1e-3, 0.02},
                 {"-weight natural -beam-fitting-size 2.5", 1e-3, 0.02}});
}

// MeerKAT, 16 antennas, 1 h at +25° (35° elevation): a beam 7–15 × longer than wide; 256² at 2″.
// Measured ≤ 8.8e-5 (natural), BPA ≤ 0.0001° (before: BMIN −3.9 %).
TEST(ImageBeamVsWsclean, LowDeclinationTrack) {
  compare_cases("/data/simulate_ms.py --sky single --antennas 16 --hours 1 --integration 300 --channels 1 "
                "--noise 0 --dec 25 --bandwidth 1e6 --correlations i",
                "256", "2asec",
                {{"-weight natural", 1e-3, 0.02},
                 {"-weight uniform", 1e-3, 0.02},
                 {"-weight briggs 0", 1e-3, 0.02},
                 {"-weight natural -circular-beam", 1e-3, 0.02},
                 {"-weight uniform -beam-fitting-size 4", 1e-3, 0.02},
                 {"-weight natural -beam-fitting-size 2.5", 1e-3, 0.02}});
}

}  // namespace
}  // namespace gpuclean

// `gpuclean image -niter N -device cpu` (the binary) against Debian's WSClean 3.1 running its own
// Cotton-Schwab loop with the same options (plan §5, Clark): the final residual RMS and the model's total
// flux within 2 % of WSClean's (issue 36), and every truth source of at least 5σ recovered in both.
// The MS: data/simulate_ms.py, 10 points (13 mJy..0.84 Jy), 32 antennas, 1 h, 2 channels, noise 10 mJy;
// each program takes about 1 s on 2 cores. Both programs are run once for all the tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "io/fits_reader.hpp"
#include "tests/app/image_vs_wsclean_support.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean {
namespace {

using namespace test;  // TempDir, Source, truth, rms, total, pixel_of, around, Outputs

const char* const kOptions =
    "-use-wgridder -no-small-inversion -niter 10000 -mgain 0.8 -auto-threshold 3 -weight briggs 0 -make-psf -j 2 "
    "-size 512 512 -scale 2asec";

struct Shared {
  TempDir dir;
  Outputs ours, theirs;
  std::vector<Source> sources;
};

class ImageCleanVsWsclean : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto s = std::make_unique<Shared>();
    const std::string ms = s->dir.file("a.ms");
    test::run_python(s->dir, test::source_dir() + "/data/simulate_ms.py --out " + ms +
                                 " --sky points --antennas 32 --hours 1 --integration 300 --channels 2 --noise 0.01");
    // gpuclean first: WSClean writes MODEL_DATA into the MS (gpuclean reads DATA only, but keep it untouched).
    const test::CommandResult g =
        test::run_gpuclean(s->dir, std::string("image ") + kOptions + " -device cpu -name " + s->dir.file("g") + " " + ms);
    ASSERT_EQ(g.code, 0) << g.err;
    std::printf("%s", g.out.c_str());
    const test::CommandResult w =
        test::run_command(s->dir, std::string("wsclean ") + kOptions + " -name " + s->dir.file("w") + " " + ms);
    ASSERT_EQ(w.code, 0) << w.err;
    const auto read = [&](const char* name, Outputs& run) {
      const std::pair<const char*, io::FitsImage*> files[] = {
          {"residual", &run.residual}, {"model", &run.model}, {"image", &run.image}};
      for (auto [kind, image] : files)
        *image = io::read_fits_image(s->dir.file(std::string(name) + "-" + kind + ".fits"));
    };
    read("g", s->ours);
    read("w", s->theirs);
    const io::FitsImage& h = s->theirs.image;  // two channels of equal width: centres at CRVAL3 ± CDELT3 / 4
    const double centre = *h.header.get_double("CRVAL3"), width = *h.header.get_double("CDELT3");
    s->sources = truth(s->dir.file("a-truth.csv"), centre - width / 4, centre + width / 4);
    shared_ = std::move(s);
  }
  static void TearDownTestSuite() { shared_.reset(); }
  void SetUp() override { ASSERT_TRUE(shared_) << "the runs failed (see the first test)"; }

  static std::unique_ptr<Shared> shared_;
};

std::unique_ptr<Shared> ImageCleanVsWsclean::shared_;

TEST_F(ImageCleanVsWsclean, ResidualRmsWithin2Percent) {
  const double ours = rms(shared_->ours.residual), theirs = rms(shared_->theirs.residual);
  const double rel = ours / theirs - 1;
  std::printf("residual RMS: gpuclean %.4f mJy, WSClean %.4f mJy (%+.2f %%)\n", 1e3 * ours, 1e3 * theirs, 100 * rel);
  // Measured -0.24 % (components per round 51/112/698/696, WSClean's 51/112/697/689). Before an outer
  // loop's round kept one σ, subtracted the whole PSF in Clark's minor cycle and made one pass
  // (clean/outer_loop.hpp): -8.5 %; with only the first -7.0 %, only the second -4.5 %, both -0.45 %.
  EXPECT_NEAR(ours, theirs, 0.02 * theirs);
}

TEST_F(ImageCleanVsWsclean, ModelFluxWithin2Percent) {
  const double ours = total(shared_->ours.model), theirs = total(shared_->theirs.model);
  std::printf("model flux: gpuclean %.4f Jy, WSClean %.4f Jy (%+.2f %%)\n", ours, theirs, 100 * (ours / theirs - 1));
  // Measured +0.04 % (+2.0 % before the changes above).
  EXPECT_NEAR(ours, theirs, 0.02 * theirs);
}

// A source counts as recovered when (1) the model has more than 3σ of components within 3 pixels (6″, half
// the beam's minor axis) of it, and (2) that model flux plus the residual at its nearest pixels (the largest
// within 0.75 px: what is left uncleaned of a point source, in Jy/beam) is its flux within 5 % + 3σ. Why not the model's flux alone
// within 10 % (plan §5): CLEAN stops at 3σ, so a faint source keeps up to 3σ in the residual; WSClean's own
// model holds 42 % of the 13.5 mJy source (measured). Why not the restored image's peak: a source off a pixel
// centre loses up to 8 % of it (0.7 px against the 4 px minor axis). The error left: the noise at a pixel
// (σ, hence 3σ) and one flat-spectrum MFS component for sources of α ≈ -1 over a 2:1 band (the model vs the
// mean of the channel fluxes: within 2 % for the bright sources, measured), hence 5 %. σ = WSClean's final
// residual RMS.
TEST_F(ImageCleanVsWsclean, TruthSourcesAbove5SigmaRecoveredInBoth) {
  const double sigma = rms(shared_->theirs.residual);
  int checked = 0;
  for (const Source& s : shared_->sources) {
    if (s.flux_jy < 5 * sigma) continue;
    ++checked;
    const std::pair<const char*, const Outputs*> runs[] = {{"gpuclean", &shared_->ours}, {"WSClean", &shared_->theirs}};
    for (auto [who, run] : runs) {
      double x, y;
      pixel_of(run->model, s, &x, &y);
      const double model = around(run->model, x, y, 3.0, false), left = around(run->residual, x, y, 0.75, true);
      std::printf("%-8s source at (%.0f, %.0f) px, %.4f Jy: model %.4f Jy + residual %.4f = %.4f Jy\n", who, x, y,
                  s.flux_jy, model, left, model + left);
      EXPECT_GT(model, 3 * sigma) << who;
      EXPECT_NEAR(model + left, s.flux_jy, 0.05 * s.flux_jy + 3 * sigma) << who;
    }
  }
  EXPECT_EQ(checked, 10);  // all ten points are above 5σ on this MS
}

}  // namespace
}  // namespace gpuclean

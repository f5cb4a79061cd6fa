// `gpuclean image -channels-out 4 -join-channels -deconvolution-channels 2 -fit-spectral-pol 2 -device cpu`
// (the binary) against Debian's WSClean 3.1 with the same options (issue 36; the rules in
// app/image/channel_averaging_imager.hpp).
//
// Measured with WSClean 3.1 alone (2026-11-26, this MS at 256² × 4″; the tests run -mgain 0.8 at 512² × 2″
// and -mgain 1 at 1024² × 4″, see SetUpTestSuite): with -mgain 1 the residuals of
// the channels of one deconvolution channel are identical (0000 = 0001, 0002 = 0003: the group's
// averaged residual assigned to each, AssignAndStoreResidual), with -mgain 0.8 each channel has
// its own (re-imaged); every model pixel's four channel values lie on a line in frequency
// (2e-8 of the peak off it).
// Run before the wiring (2026-11-26, gpuclean ignoring the option, 19 s for the four runs): the group test
// fails for gpuclean only; WSClean's -mgain 1 residual RMS is 7.3014 mJy in both 0000 and 0001, 4.7528 in
// 0002 and 0003; -mgain 0.8 RMS and flux were already within 0.8 % (a 2-term fit over 2 or 4 planes
// differs little); models on their line: gpuclean 5e-8, WSClean 4e-8 of the peak.
// The MS: data/simulate_ms.py as test_image_joined_vs_wsclean (10 points, 32 antennas, 1 h, 8 channels,
// noise 10 mJy). Each configuration is run once by both programs for all the tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/app/image_vs_wsclean_support.hpp"

namespace gpuclean {
namespace {

using namespace test;

const char* const kOptions =
    "-use-wgridder -no-small-inversion -niter 10000 -auto-threshold 3 -channels-out 4 -join-channels "
    "-deconvolution-channels 2 -fit-spectral-pol 2 -weight briggs 0 -make-psf -j 2";
const char* const kImages[] = {"0000", "0001", "0002", "0003", "MFS"};
constexpr std::size_t kChannels = 4;

struct BothRuns {
  TempDir dir;
  std::vector<Outputs> ours, theirs;  // the four channels, then the MFS
};

std::unique_ptr<BothRuns> run_both_programs(const std::string& mgain, const std::string& size) {
  auto r = std::make_unique<BothRuns>();
  const std::string ms = simulate(r->dir, "a", "--sky points --antennas 32 --hours 1 --integration 300 "
                                               "--channels 8 --noise 0.01");
  run_both(r->dir, std::string(kOptions) + " -mgain " + mgain + " " + size, ms);
  for (const char* name : kImages) {
    r->ours.push_back(read_outputs(r->dir.file(std::string("g-") + name)));
    r->theirs.push_back(read_outputs(r->dir.file(std::string("w-") + name)));
  }
  return r;
}

class ImageDeconvolutionChannelsVsWsclean : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cycles_ = run_both_programs("0.8", "-size 512 512 -scale 2asec");
    // -mgain 1 writes the deconvolver's image-plane residual. WSClean 3.1 subtracts the components
    // by an FFT convolution padded only 1.1× (genericclean.cpp, SubMinorLoop::CorrectResidualDirty),
    // so the PSF's sidelobes of sources far from the centre wrap around; gpuclean's convolution is
    // linear. Measured on this MS at 256² × 4″: gpuclean's residual RMS 18–20 % below WSClean's with
    // the same model (to 1e-5); at 1024² × 4″, where no sidelobe within the PSF wraps, 0.05 %.
    one_ = run_both_programs("1", "-size 1024 1024 -scale 4asec");
  }
  static void TearDownTestSuite() { cycles_.reset(), one_.reset(); }
  void SetUp() override { ASSERT_TRUE(cycles_ && one_) << "the runs failed (see the first test)"; }

  static std::unique_ptr<BothRuns> cycles_, one_;
};

std::unique_ptr<BothRuns> ImageDeconvolutionChannelsVsWsclean::cycles_, ImageDeconvolutionChannelsVsWsclean::one_;

double max_abs(const io::FitsImage& f) {
  double m = 0;
  for (float v : f.pixels) m = std::max(m, double{std::abs(v)});
  return m;
}

/// The largest distance of a model pixel's four channel values from their least-squares line in
/// frequency (CRVAL3), over the largest model value.
double off_the_line(const std::vector<Outputs>& channels) {
  std::vector<double> f;
  double peak = 0;
  for (std::size_t c = 0; c < kChannels; ++c) {
    f.push_back(*channels[c].model.header.get_double("CRVAL3"));
    peak = std::max(peak, max_abs(channels[c].model));
  }
  const double fm = (f[0] + f[1] + f[2] + f[3]) / 4;
  double worst = 0;
  for (std::size_t p = 0; p < channels[0].model.pixels.size(); ++p) {
    double v[kChannels], vm = 0;
    for (std::size_t c = 0; c < kChannels; ++c) vm += (v[c] = channels[c].model.pixels[p]) / kChannels;
    double sxy = 0, sxx = 0;
    for (std::size_t c = 0; c < kChannels; ++c) sxy += (f[c] - fm) * (v[c] - vm), sxx += (f[c] - fm) * (f[c] - fm);
    for (std::size_t c = 0; c < kChannels; ++c) worst = std::max(worst, std::abs(v[c] - vm - sxy / sxx * (f[c] - fm)));
  }
  return worst / peak;
}

// With -mgain 1 nothing is re-imaged: each channel's residual is its deconvolution channel's
// (WSClean's AssignAndStoreResidual), so channels 0 and 1, and 2 and 3, are the same image.
TEST_F(ImageDeconvolutionChannelsVsWsclean, MgainOneResidualsAreTheGroupsResidual) {
  for (const auto* who : {&one_->ours, &one_->theirs}) {
    const std::string name = who == &one_->ours ? "gpuclean" : "WSClean";
    EXPECT_EQ(max_difference((*who)[0].residual, (*who)[1].residual), 0.0) << name;
    EXPECT_EQ(max_difference((*who)[2].residual, (*who)[3].residual), 0.0) << name;
    EXPECT_GT(max_difference((*who)[1].residual, (*who)[2].residual), 1e-3) << name;
  }
  // With -mgain 0.8 each channel is re-imaged from its own interpolated model.
  for (const auto* who : {&cycles_->ours, &cycles_->theirs})
    EXPECT_GT(max_difference((*who)[0].residual, (*who)[1].residual), 1e-4);
}

// The models written are the M-channel model interpolated: a line over all four channels for a
// 2-term fit.
TEST_F(ImageDeconvolutionChannelsVsWsclean, ModelsAreTheFitAtEveryChannel) {
  for (const BothRuns* r : {cycles_.get(), one_.get()}) {
    const double ours = off_the_line(r->ours), theirs = off_the_line(r->theirs);
    std::printf("model off its line: gpuclean %.2e, WSClean %.2e of the peak\n", ours, theirs);
    EXPECT_LT(ours, 1e-5);
    EXPECT_LT(theirs, 1e-5);
  }
}

// As test_image_joined_vs_wsclean: per channel and MFS, the residual RMS and the model's flux within
// 2 % of WSClean's.
TEST_F(ImageDeconvolutionChannelsVsWsclean, ResidualRmsAndModelFluxWithin2PercentPerChannelAndMfs) {
  for (const auto& [label, r] : {std::pair<const char*, const BothRuns*>{"-mgain 0.8", cycles_.get()},
                                 std::pair<const char*, const BothRuns*>{"-mgain 1", one_.get()}}) {
    for (std::size_t i = 0; i < r->ours.size(); ++i) {
      const double rms_ours = rms(r->ours[i].residual), rms_theirs = rms(r->theirs[i].residual);
      const double flux_ours = total(r->ours[i].model), flux_theirs = total(r->theirs[i].model);
      const double rms_rel = rms_ours / rms_theirs - 1, flux_rel = flux_ours / flux_theirs - 1;
      std::printf("%s %-4s: residual RMS gpuclean %.4f mJy, WSClean %.4f mJy (%+.2f %%); model flux gpuclean "
                  "%.4f Jy, WSClean %.4f Jy (%+.2f %%)\n",
                  label, kImages[i], 1e3 * rms_ours, 1e3 * rms_theirs, 100 * rms_rel, flux_ours, flux_theirs,
                  100 * flux_rel);
      EXPECT_NEAR(rms_ours, rms_theirs, 0.02 * rms_theirs) << label << " " << kImages[i];
      EXPECT_NEAR(flux_ours, flux_theirs, 0.02 * flux_theirs) << label << " " << kImages[i];
    }
  }
}

}  // namespace
}  // namespace gpuclean

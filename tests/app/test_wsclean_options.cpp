// The WSClean hook's settings in C++ (app/outer/wsclean_options.hpp): GPUCLEAN_OPTIONS split as a
// shell does, WSClean's options carried by the option table's WSClean names, "given" as the parser
// counted it. The rounds need a session: python/tests/test_wsclean_settings.py runs them.
#include <gtest/gtest.h>

#include "app/outer/wsclean_options.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

using Words = std::vector<std::string>;

const Words kWsclean = {"wsclean", "-size", "512", "512", "-niter", "1000"};

Words with(Words extra) {
  Words args = kWsclean;
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("obs.ms");
  return args;
}

TEST(WscleanOptions, SplitsAsAShellDoes) {
  EXPECT_EQ(split_words("--niter 10\t--fits-mask 'a b.fits' --select \"x\\\"y\" c\\ d"),
            (Words{"--niter", "10", "--fits-mask", "a b.fits", "--select", "x\"y", "c d"}));
  EXPECT_EQ(split_words(""), Words{});
  EXPECT_EQ(split_words("''"), Words{""});
  EXPECT_THROW(split_words("--fits-mask \"open"), clean::InvalidSettings);
}

TEST(WscleanOptions, CarriesByTheTablesWscleanNamesWithTheLastValue) {
  EXPECT_EQ(carried_options(with({"-auto-mask", "4", "-multiscale", "-auto-mask", "5", "-gain", "0.2"}), {}),
            (Words{"--auto-mask", "5", "--multiscale"}));  // -gain reaches the hook through meta
  EXPECT_EQ(carried_options(with({"-join-channels", "-channels-out", "4"}), {}), Words{});  // the layout's
}

TEST(WscleanOptions, GpucleanOptionsWinAsTheParserCountsThem) {
  EXPECT_EQ(carried_options(with({"-auto-mask", "5", "-local-rms"}), {"--auto-mask=4"}), Words{"--local-rms"});
  // A part of a line: --multiscale-gain without --multiscale still says what it gives.
  EXPECT_EQ(carried_options(with({"-multiscale", "-multiscale-gain", "0.1"}), {"--multiscale-gain", "0.3"}),
            Words{"--multiscale"});
}

TEST(WscleanOptions, TheLastOfNegativeAndNoNegativeWins) {
  EXPECT_EQ(carried_options(with({"-no-negative", "-negative"}), {}), Words{});
  EXPECT_EQ(carried_options(with({"-negative", "-no-negative"}), {}), Words{"--no-negative"});
}

// WSClean took its command line before the hook reads it (3.7 refuses a missing value, 3.1
// crashes), so a trailing option without its value is left out, not guessed at.
TEST(WscleanOptions, ATrailingOptionWithoutItsValueIsLeftOut) {
  EXPECT_TRUE(carried_options({"wsclean", "-fits-mask"}, {}).empty());
  EXPECT_EQ(carried_options({"wsclean", "-auto-mask", "5", "-fits-mask"}, {}),
            (std::vector<std::string>{"--auto-mask", "5"}));
}

TEST(WscleanOptions, SettingsFromMetaAndTheLayout) {
  WscleanSessionRequest request;
  request.gpuclean_options = "--device cpu --niter 50";
  request.wsclean_args = with({"-auto-mask", "5"});
  request.channels = 4;
  request.gain = 0.05;
  request.version = std::make_pair(3, 1);
  const WscleanSessionSettings s = wsclean_session_settings(request);
  EXPECT_EQ(s.args, (Words{"--device", "cpu", "--niter", "50", "--auto-mask", "5", "--join-channels", "--gain", "0.05",
                           "--auto-threshold", "0"}));
  EXPECT_EQ(s.notes, Words{"WSClean 3.1"});
  EXPECT_EQ(s.niter, std::optional<std::size_t>(50));
  EXPECT_TRUE(s.wsclean_auto_mask);
  EXPECT_FALSE(s.fit_given);
  EXPECT_EQ(s.options.settings.gain, 0.05);
  EXPECT_TRUE(s.options.settings.join_channels);
}

TEST(WscleanOptions, TheDeviceIsReadByTheParser) {
  EXPECT_TRUE(device_is_cpu("--device=cpu"));
  EXPECT_TRUE(device_is_cpu("-q --device 'cpu'"));
  EXPECT_FALSE(device_is_cpu("--device auto"));
  EXPECT_FALSE(device_is_cpu("--fits-mask cpu"));
  EXPECT_FALSE(device_is_cpu("--no-such-option --device cpu"));
}

}  // namespace
}  // namespace gpuclean::app

// The reader's Stokes I weights against WSClean 3.x's own reading of the same MS: with natural
// weighting and every sample inside the uv grid, WSClean's WSCIMGWG is the sum of the visibility
// weights it gridded and its "Gridded visibility count" the number of nonzero ones. (Without
// FLAG_ROW, which WSClean ignores.)
#include <fitsio.h>
#include <gtest/gtest.h>

#include <regex>

#include "io/ms/ms_reader.hpp"
#include "io/ms/ms_selection.hpp"
#include "tests/io/ms_test_files.hpp"

namespace gpuclean::io::ms {
namespace {

using test::TempDir;

struct Gridded {
  double weight_sum = 0;
  std::size_t count = 0;
};

/// wsclean -niter 0 on `ms` with `options`; 1″ pixels put the 8-antenna MS well inside the grid.
Gridded wsclean_gridded(const TempDir& dir, const std::string& ms, const std::string& options) {
  const test::CommandResult r = test::run_command(
      dir, "wsclean -size 64 64 -scale 1asec -weight natural -niter 0 -j 2 -name " + dir.file("wsc") + " " +
               options + " " + ms);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  Gridded g;
  std::smatch match;
  const std::regex count("Gridded visibility count: ([0-9]+)");
  EXPECT_TRUE(std::regex_search(r.out, match, count)) << r.out;
  if (!match.empty()) g.count = std::stoul(match[1]);
  fitsfile* f = nullptr;
  int status = 0;
  fits_open_file(&f, dir.file("wsc-dirty.fits").c_str(), READONLY, &status);
  fits_read_key_dbl(f, "WSCIMGWG", &g.weight_sum, nullptr, &status);
  fits_close_file(f, &status);
  EXPECT_EQ(status, 0);
  return g;
}

Gridded ours(const std::string& ms, const SelectionRequest& request) {
  ReadTally tally;
  const VisChunk c =
      read_visibilities(select_visibilities({read_ms_metadata(ms)}, request).front(), MsReader::kDefaultChunkRows, &tally);
  Gridded g;
  for (float w : c.weight) g.weight_sum += w;
  g.count = tally.weighted_samples;
  return g;
}

void expect_same(const Gridded& got, const Gridded& wsclean) {
  EXPECT_EQ(got.count, wsclean.count);
  EXPECT_NEAR(got.weight_sum, wsclean.weight_sum, 1e-12 * wsclean.weight_sum);
}

TEST(MsReaderVsWsclean, StokesIWeightsWithFlagsUnequalWeightsNonFiniteAndAutocorrelations) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--flags --weights --nan --autocorrelations 5");
  expect_same(ours(ms, {}), wsclean_gridded(dir, ms, ""));
}

TEST(MsReaderVsWsclean, WeightSpectrum) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--flags --weights --weight-spectrum");
  expect_same(ours(ms, {}), wsclean_gridded(dir, ms, ""));
}

TEST(MsReaderVsWsclean, OneCorrelationAndAChannelRange) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--flags --weights");
  SelectionRequest xx;
  xx.pol = PolRequest::kXX;
  expect_same(ours(ms, xx), wsclean_gridded(dir, ms, "-pol xx"));
  SelectionRequest range;
  range.channel_begin = 1;
  range.channel_end = 3;
  expect_same(ours(ms, range), wsclean_gridded(dir, ms, "-channel-range 1 3"));
}

TEST(MsReaderVsWsclean, AnICorrelation) {
  TempDir dir;
  const std::string ms = test::make_ms(dir, "a.ms", "--flags --weights", "i");
  expect_same(ours(ms, {}), wsclean_gridded(dir, ms, ""));
}

}  // namespace
}  // namespace gpuclean::io::ms

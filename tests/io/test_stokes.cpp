// WSClean's Stokes rules on hand-made rows (W31:msproviders/msprovider.cpp CopyData/CopyWeights).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/ms/ms_metadata.hpp"
#include "io/ms/stokes.hpp"

namespace gpuclean::io::ms {
namespace {

using C = std::complex<float>;

StokesRule rule_for(const std::vector<int>& types, PolRequest pol) {
  StokesRule r;
  std::string why;
  EXPECT_TRUE(stokes_rule(types, pol, r, why)) << why;
  return r;
}

TEST(Stokes, RulesFromCorrelationTypes) {
  const StokesRule xy = rule_for({kCorrXX, 10, 11, kCorrYY}, PolRequest::kI);
  EXPECT_EQ(xy.kind, StokesRule::Kind::kAverage);
  EXPECT_EQ(xy.a, 0u);
  EXPECT_EQ(xy.b, 3u);
  const StokesRule circ = rule_for({kCorrRR, kCorrLL}, PolRequest::kI);
  EXPECT_EQ(circ.kind, StokesRule::Kind::kAverage);
  EXPECT_EQ(circ.b, 1u);
  // An I correlation is copied even beside XX and YY.
  const StokesRule i = rule_for({kCorrXX, kCorrYY, kCorrI}, PolRequest::kI);
  EXPECT_EQ(i.kind, StokesRule::Kind::kCopy);
  EXPECT_EQ(i.a, 2u);
  const StokesRule yy = rule_for({kCorrXX, kCorrYY}, PolRequest::kYY);
  EXPECT_EQ(yy.kind, StokesRule::Kind::kCopy);
  EXPECT_EQ(yy.a, 1u);
  StokesRule r;
  std::string why;
  EXPECT_FALSE(stokes_rule({kCorrXX, 10}, PolRequest::kI, r, why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(stokes_rule({kCorrXX, kCorrYY}, PolRequest::kLL, r, why));
}

TEST(Stokes, AverageTakesFourTimesTheSmallerWeight) {
  const StokesRule rule{StokesRule::Kind::kAverage, 0, 1};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Channels: clean (YY heavier); XX flagged; YY non-finite; XX heavier.
  const C data[] = {{1, 2}, {3, 4}, {1, 1}, {5, 5}, {2, 0}, {nan, 0}, {1, 0}, {3, 0}};
  const bool flag[] = {false, false, true, false, false, false, false, false};
  const float weight[] = {1, 3, 1, 1, 1, 1, 2, 0.5f};
  C value[4];
  float w[4];
  apply_stokes_rule(rule, 4, 2, data, flag, weight, value, w);
  EXPECT_EQ(value[0], C(2, 3));
  EXPECT_EQ(w[0], 4.0f);
  EXPECT_EQ(value[1], C(3, 3));  // a flagged correlation keeps the value, loses the weight
  EXPECT_EQ(w[1], 0.0f);
  EXPECT_EQ(value[2], C(0, 0));  // non-finite → 0
  EXPECT_EQ(w[2], 0.0f);
  EXPECT_EQ(value[3], C(2, 0));
  EXPECT_EQ(w[3], 2.0f);  // 4 · min(2, 0.5)
}

TEST(Stokes, CopyKeepsTheWeight) {
  const StokesRule rule{StokesRule::Kind::kCopy, 1, 1};
  const float inf = std::numeric_limits<float>::infinity();
  const C data[] = {{9, 9}, {1, 2}, {9, 9}, {0, inf}, {9, 9}, {3, 0}};
  const bool flag[] = {false, false, false, false, true, true};
  const float weight[] = {7, 0.25f, 7, 1, 7, 3};
  C value[3];
  float w[3];
  apply_stokes_rule(rule, 3, 2, data, flag, weight, value, w);
  EXPECT_EQ(value[0], C(1, 2));
  EXPECT_EQ(w[0], 0.25f);
  EXPECT_EQ(value[1], C(0, 0));
  EXPECT_EQ(w[1], 0.0f);
  EXPECT_EQ(value[2], C(3, 0));
  EXPECT_EQ(w[2], 0.0f);
}

}  // namespace
}  // namespace gpuclean::io::ms

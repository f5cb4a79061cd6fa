// WSClean's Stokes rules on hand-made rows (W31:msproviders/msprovider.cpp CopyData/CopyWeights).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "clean/errors.hpp"
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

TEST(Stokes, ListsAreWscleansSetsInItsOrder) {
  using P = PolRequest;
  EXPECT_EQ(parse_pol_list("i"), std::vector<P>{P::kI});
  EXPECT_EQ(parse_pol_list("VUQI"), (std::vector<P>{P::kI, P::kQ, P::kU, P::kV}));
  EXPECT_EQ(parse_pol_list("xx,yy"), (std::vector<P>{P::kXX, P::kYY}));
  EXPECT_EQ(parse_pol_list("yy xx"), (std::vector<P>{P::kXX, P::kYY}));
  EXPECT_EQ(parse_pol_list("ll/rr"), (std::vector<P>{P::kRR, P::kLL}));
  EXPECT_EQ(parse_pol_list("xx,xy,yx,yy"), (std::vector<P>{P::kXX, P::kXY, P::kXYi, P::kYY}));
  EXPECT_EQ(parse_pol_list("rl"), std::vector<P>{P::kRL});
  EXPECT_EQ(parse_pol_list("iiq"), (std::vector<P>{P::kI, P::kQ}));
  for (const char* bad : {"", "x", "xz", "i;v", "xy", "yx,yy", ",i", "i,", "linear", "q2"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_pol_list(bad), clean::InvalidSettings);
  }
  EXPECT_EQ(pol_name(P::kXYi), "XYi");
  EXPECT_EQ(pol_stokes_code(P::kRL), -3);
  EXPECT_EQ(pol_stokes_code(P::kXYi), -7);
}

// The forward rules with aocommon's conventions (XX = I+Q, XY = U+iV, RL = Q+iU, RR = I+V), and
// back: a row made from known I, Q, U, V gives them again, and the way back rebuilds the row.
TEST(Stokes, EveryStokesParameterFromLinearAndCircularFeeds) {
  const C i(1.0f, 0.1f), q(0.3f, -0.2f), u(-0.25f, 0.05f), v(0.1f, 0.4f), j(0, 1);
  const std::vector<int> linear = {kCorrXX, kCorrXY, kCorrYX, kCorrYY}, circular = {kCorrRR, kCorrRL, kCorrLR, kCorrLL};
  const C lin_row[] = {i + q, u + j * v, u - j * v, i - q};
  const C circ_row[] = {i + v, q + j * u, q - j * u, i - v};
  const bool flag[4] = {};
  const float weight[4] = {2, 3, 5, 7};
  struct Case {
    const std::vector<int>* types;
    const C* row;
    PolRequest pol;
    C expected;
    float w;
  };
  const Case cases[] = {
      {&linear, lin_row, PolRequest::kI, i, 8}, {&linear, lin_row, PolRequest::kQ, q, 8},
      {&linear, lin_row, PolRequest::kU, u, 12}, {&linear, lin_row, PolRequest::kV, v, 12},
      {&linear, lin_row, PolRequest::kXY, u, 12}, {&linear, lin_row, PolRequest::kXYi, v, 12},
      {&circular, circ_row, PolRequest::kI, i, 8}, {&circular, circ_row, PolRequest::kQ, q, 12},
      {&circular, circ_row, PolRequest::kU, u, 12}, {&circular, circ_row, PolRequest::kV, v, 8},
      {&circular, circ_row, PolRequest::kRL, q + j * u, 3}};
  for (const Case& c : cases) {
    SCOPED_TRACE(pol_name(c.pol));
    const StokesRule r = rule_for(*c.types, c.pol);
    C value;
    float w;
    apply_stokes_rule(r, 1, 4, c.row, flag, weight, &value, &w);
    EXPECT_NEAR(std::abs(value - c.expected), 0.0f, 1e-6f);
    EXPECT_EQ(w, c.w);  // 4·min of the pair, or the copied correlation's own
  }
  // Back, in WSClean's set order I, Q, U, V: each keeps what the earlier ones put into its pair.
  for (const auto* feeds : {&linear, &circular}) {
    C row[4] = {};
    for (const auto& [pol, value] : {std::pair{PolRequest::kI, i}, {PolRequest::kQ, q}, {PolRequest::kU, u},
                                     {PolRequest::kV, v}})
      put_stokes_value(rule_for(*feeds, pol), value, row);
    const C* expected = feeds == &linear ? lin_row : circ_row;
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(std::abs(row[k] - expected[k]), 0.0f, 1e-6f) << k;
  }
  // A row with XY, YX alone: U missing a pair is refused with the reason.
  StokesRule r;
  std::string why;
  EXPECT_FALSE(stokes_rule({kCorrXX, kCorrYY}, PolRequest::kU, r, why));
  EXPECT_NE(why.find("XY and YX"), std::string::npos);
}

}  // namespace
}  // namespace gpuclean::io::ms

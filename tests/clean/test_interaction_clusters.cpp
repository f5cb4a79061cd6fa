// The cluster rule of the GPU minor cycle (clean/interaction_clusters.hpp), stated and checked
// on the CPU: every clustered run gives exactly the sequential minor cycle's components, in
// order, bit for bit, on random active sets with a PSF whose negative sidelobes make the
// clusters' sequences non-monotone, with ties, budgets that cut the cycle, and both signs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>

#include "clean/interaction_clusters.hpp"
#include "tests/support/random_psf.hpp"

namespace gc = gpuclean::clean;

namespace {

// Clumps of members around random centres, a few isolated ones, some repeated values (ties).
std::vector<gc::ActiveMember> random_active(std::size_t w, std::size_t h, std::mt19937& rng, int clumps) {
  std::vector<std::uint8_t> used(w * h, 0);
  std::vector<gc::ActiveMember> out;
  std::uniform_int_distribution<int> ux(0, static_cast<int>(w) - 1), uy(0, static_cast<int>(h) - 1), spread(-4, 4);
  std::uniform_real_distribution<float> val(0.2f, 3.0f);
  std::bernoulli_distribution negative(0.2), tie(0.1);
  auto add = [&](int x, int y) {
    if (x < 0 || y < 0 || x >= static_cast<int>(w) || y >= static_cast<int>(h)) return;
    if (used[static_cast<std::size_t>(y) * w + static_cast<std::size_t>(x)]++) return;
    float v = tie(rng) ? 1.5f : val(rng);
    if (negative(rng)) v = -v;
    out.push_back({x, y, v});
  };
  for (int c = 0; c < clumps; ++c) {
    const int cx = ux(rng), cy = uy(rng);
    for (int i = 0; i < 25; ++i) add(cx + spread(rng), cy + spread(rng));
  }
  for (int i = 0; i < 10; ++i) add(ux(rng), uy(rng));
  std::sort(out.begin(), out.end(), [w](const gc::ActiveMember& a, const gc::ActiveMember& b) {
    return a.y * static_cast<std::int64_t>(w) + a.x < b.y * static_cast<std::int64_t>(w) + b.x;
  });
  return out;
}

void expect_same(const std::vector<gc::Component>& want, const std::vector<gc::Component>& got) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].x, want[i].x) << "component " << i;
    ASSERT_EQ(got[i].y, want[i].y) << "component " << i;
    ASSERT_EQ(std::memcmp(&got[i].flux, &want[i].flux, sizeof(float)), 0) << "component " << i;
  }
}

}  // namespace

TEST(InteractionClusters, ClusteredMinorCycleEqualsTheSequentialOne) {
  std::mt19937 rng(20261123);
  int cases = 0, split_cases = 0, cut_cases = 0;
  for (std::size_t hw : {1u, 3u, 6u, 12u}) {
    for (int clumps : {1, 4, 12, 40}) {
      for (bool negative : {true, false}) {
        for (std::size_t budget : {5u, 60u, 100000u}) {
          const std::size_t w = 160, h = 120;
          const gc::PreparedPsf psf = gpuclean::test::uniform_random_psf(2 * hw + 9, -0.25f, 0.6f, rng);
          const std::vector<gc::ActiveMember> active = random_active(w, h, rng, clumps);
          const double limit = 0.4;
          std::vector<gc::ActiveMember> seq_members = active;
          std::vector<gc::Component> want, got;
          gc::MinorCycleCpu(psf, hw, w, w * h).run(seq_members, limit, 0.1, negative, budget, &want);
          gc::clustered_minor_cycle_cpu(psf, hw, w, h, active, limit, 0.1, negative, budget, &got);
          SCOPED_TRACE("hw " + std::to_string(hw) + " clumps " + std::to_string(clumps) + " budget " +
                       std::to_string(budget) + (negative ? " |x|" : " x"));
          expect_same(want, got);
          const auto labels = gc::interaction_clusters(active, hw, w, h);
          split_cases += std::set<std::uint32_t>(labels.begin(), labels.end()).size() > 1;
          cut_cases += want.size() == budget;
          ++cases;
        }
      }
    }
  }
  // The property is only worth checking where the runs really split and really get cut.
  EXPECT_GT(split_cases, cases / 2);
  EXPECT_GT(cut_cases, cases / 4);
}

TEST(InteractionClusters, MembersThatCanInteractShareALabel) {
  std::mt19937 rng(7);
  for (std::size_t hw : {0u, 2u, 5u, 50u}) {
    const std::size_t w = 300, h = 200;
    const auto active = random_active(w, h, rng, 30);
    const auto labels = gc::interaction_clusters(active, hw, w, h);
    const auto r = static_cast<std::int32_t>(hw);
    for (std::size_t a = 0; a < active.size(); ++a) {
      for (std::size_t b = a + 1; b < active.size(); ++b) {
        if (std::abs(active[a].x - active[b].x) <= r && std::abs(active[a].y - active[b].y) <= r) {
          ASSERT_EQ(labels[a], labels[b]) << "members " << a << " and " << b << " with hw " << hw;
        }
      }
    }
  }
}

TEST(InteractionClusters, DistantGroupsAreSeparate) {
  // Two groups 40 pixels apart with a 5-pixel patch: two clusters. 4 pixels apart: one.
  std::vector<gc::ActiveMember> far = {{10, 10, 1}, {12, 11, 1}, {50, 10, 1}, {51, 12, 1}};
  auto l = gc::interaction_clusters(far, 5, 100, 100);
  EXPECT_EQ(l[0], l[1]);
  EXPECT_EQ(l[2], l[3]);
  EXPECT_NE(l[0], l[2]);
  std::vector<gc::ActiveMember> near = {{10, 10, 1}, {15, 14, 1}};
  l = gc::interaction_clusters(near, 5, 100, 100);
  EXPECT_EQ(l[0], l[1]);
  // A large image gets cells larger than the patch but never more than about 2^20 of them.
  const auto g = gc::interaction_grid(2, 16384, 16384);
  EXPECT_GE(g.cell, 3u);
  EXPECT_LE(g.cells(), gc::kMaxInteractionCells + 2 * 16384 / g.cell + 1);
}

// The Eytzinger splitter tree of SampleSelect's count pass: its segment of every key equals the
// number of bounds <= key (std::upper_bound), with and without the NaN bound, at every tree size.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "select/backends/eytzinger_tree.hpp"

namespace gd = gpuclean::select::detail;

namespace {

void expect_segments_match(const std::vector<std::uint32_t>& bounds, std::mt19937_64& rng) {
  const gd::EytzingerTree t = gd::make_eytzinger_tree(bounds);
  ASSERT_EQ(t.nodes.size(), std::size_t{1} << t.levels);
  ASSERT_GE((1 << t.levels) - 1, t.real_bounds);
  std::vector<std::uint32_t> probes = {0u, 1u, 0x007FFFFFu, 0xFF800000u, 0xFFFFFFFEu, gd::kInvalidKey};
  for (std::uint32_t b : bounds) {
    probes.push_back(b);
    probes.push_back(b - 1);
    probes.push_back(b + 1);
  }
  for (int i = 0; i < 200; ++i) probes.push_back(static_cast<std::uint32_t>(rng()));
  for (std::uint32_t key : probes) {
    const int want = static_cast<int>(std::upper_bound(bounds.begin(), bounds.end(), key) - bounds.begin());
    ASSERT_EQ(gd::segment_of(t.nodes.data(), t.levels, t.real_bounds, t.invalid_bound, key), want)
        << "key " << key << " with " << bounds.size() << " bounds";
  }
}

}  // namespace

TEST(EytzingerTree, SegmentsAreTheNumberOfBoundsAtOrBelowTheKey) {
  std::mt19937_64 rng(3);
  for (std::size_t count : {0u, 1u, 2u, 3u, 4u, 7u, 8u, 100u, 255u, 256u, 1023u, 4095u, 4096u, 4097u, 8190u, 8191u}) {
    std::vector<std::uint32_t> bounds;
    while (bounds.size() < count) {
      for (std::size_t i = bounds.size(); i < count; ++i)
        bounds.push_back(static_cast<std::uint32_t>(rng() % 0xFF800000u) + 0x007FFFFFu);
      std::sort(bounds.begin(), bounds.end());
      bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    }
    expect_segments_match(bounds, rng);  // no NaN bound
    if (bounds.size() < 8191) {
      bounds.push_back(gd::kInvalidKey);  // SampleSelect's last bound: NaN keys alone above it
      expect_segments_match(bounds, rng);
    }
  }
  // Equality buckets: bounds v, v + 1 side by side.
  expect_segments_match({10u, 11u, 12u, 13u, 500u, 501u, gd::kInvalidKey}, rng);
  expect_segments_match({gd::kInvalidKey}, rng);
}

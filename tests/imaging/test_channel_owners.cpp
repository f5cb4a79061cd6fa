// gpuclean image's output channels over GPUs (imaging/channel_owners.hpp): contiguous blocks in
// channel order, the largest block's samples as small as a contiguous split allows, no GPU left
// empty while there are channels for it.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "imaging/channel_owners.hpp"

namespace gpuclean::imaging {
namespace {

using Owners = std::vector<std::size_t>;

std::size_t largest_block(const std::vector<std::size_t>& samples, const Owners& owners, std::size_t workers) {
  std::vector<std::size_t> sum(workers, 0);
  for (std::size_t c = 0; c < samples.size(); ++c) sum.at(owners[c]) += samples[c];
  return *std::max_element(sum.begin(), sum.end());
}

// The best largest block over every contiguous split (brute force: all cut positions).
std::size_t best_largest_block(const std::vector<std::size_t>& samples, std::size_t workers) {
  const std::size_t n = samples.size();
  std::size_t best = std::accumulate(samples.begin(), samples.end(), std::size_t{0});
  // cuts as a bit mask over the n − 1 gaps, at most workers − 1 of them
  for (std::size_t mask = 0; mask < (std::size_t{1} << (n - 1)); ++mask) {
    if (static_cast<std::size_t>(__builtin_popcountll(mask)) + 1 > workers) continue;
    std::size_t block = 0, largest = 0;
    for (std::size_t c = 0; c < n; ++c) {
      block += samples[c];
      if (c + 1 == n || (mask >> c) & 1) largest = std::max(largest, block), block = 0;
    }
    best = std::min(best, largest);
  }
  return best;
}

TEST(ChannelOwners, EqualChannelsSplitEvenly) {
  EXPECT_EQ(channel_owners({5, 5, 5, 5}, 1), (Owners{0, 0, 0, 0}));
  EXPECT_EQ(channel_owners({5, 5, 5, 5}, 2), (Owners{0, 0, 1, 1}));
  EXPECT_EQ(channel_owners({5, 5, 5, 5}, 4), (Owners{0, 1, 2, 3}));
  EXPECT_EQ(channel_owners({5, 5, 5, 5, 5, 5, 5, 5}, 4), (Owners{0, 0, 1, 1, 2, 2, 3, 3}));
}

TEST(ChannelOwners, FewerChannelsThanGpusTakeOneEach) {
  EXPECT_EQ(channel_owners({7, 3}, 4), (Owners{0, 1}));
  EXPECT_EQ(channel_owners({9}, 8), (Owners{0}));
  EXPECT_TRUE(channel_owners({}, 2).empty());
}

TEST(ChannelOwners, BalancedBySamplesNotByCount) {
  // One heavy channel gets a GPU of its own; the light ones share the other.
  EXPECT_EQ(channel_owners({100, 10, 10, 10}, 2), (Owners{0, 1, 1, 1}));
  EXPECT_EQ(channel_owners({10, 10, 10, 100}, 2), (Owners{0, 0, 0, 1}));
  // Every GPU gets a channel when there are enough, even where the largest block allows less.
  const Owners spread = channel_owners({1, 1, 1, 1, 1, 1, 1, 1, 1, 100}, 3);
  EXPECT_EQ(spread.back(), 2u);
  EXPECT_EQ(std::count(spread.begin(), spread.end(), 1u) > 0, true);
}

TEST(ChannelOwners, ContiguousAndOptimalOnManyInputs) {
  std::uint64_t state = 12345;
  const auto next = [&state] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + next() % 10, workers = 1 + next() % 5;
    std::vector<std::size_t> samples(n);
    for (std::size_t& s : samples) s = 1 + next() % 1000;
    const Owners owners = channel_owners(samples, workers);
    ASSERT_EQ(owners.size(), n);
    EXPECT_EQ(owners.front(), 0u);
    for (std::size_t c = 1; c < n; ++c) EXPECT_TRUE(owners[c] == owners[c - 1] || owners[c] == owners[c - 1] + 1);
    EXPECT_EQ(owners.back() + 1, std::min(n, workers)) << "a GPU left without a channel";
    EXPECT_EQ(largest_block(samples, owners, workers), best_largest_block(samples, workers)) << "trial " << trial;
  }
}

TEST(ChannelOwners, NoWorkerIsRefused) { EXPECT_THROW(channel_owners({1, 2}, 0), std::invalid_argument); }

}  // namespace
}  // namespace gpuclean::imaging

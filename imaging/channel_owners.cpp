#include "imaging/channel_owners.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace gpuclean::imaging {
namespace {

// Greedy blocks of at most `limit` samples; a block closes early once the channels left are just
// enough for one per worker left, so no worker stays empty. Returns the blocks used (may exceed
// `workers`: then the limit is too small).
std::size_t fill(const std::vector<std::size_t>& samples, std::size_t workers, std::size_t limit,
                 std::vector<std::size_t>* owners) {
  std::size_t block = 0, sum = 0, in_block = 0;
  for (std::size_t c = 0; c < samples.size(); ++c) {
    const std::size_t left = samples.size() - c;  // this channel included
    const bool spread = block + 1 < workers && left <= workers - block - 1;
    if (in_block > 0 && (sum + samples[c] > limit || spread)) ++block, sum = 0, in_block = 0;
    sum += samples[c], ++in_block;
    if (owners) (*owners)[c] = block;
  }
  return samples.empty() ? 0 : block + 1;
}

}  // namespace

std::vector<std::size_t> channel_owners(const std::vector<std::size_t>& samples, std::size_t workers) {
  if (workers == 0) throw std::invalid_argument("channel_owners: no worker");
  std::vector<std::size_t> owners(samples.size(), 0);
  if (samples.empty()) return owners;
  // The smallest block limit the greedy fill meets with `workers` blocks (it is monotone in it).
  std::size_t lo = *std::max_element(samples.begin(), samples.end());
  std::size_t hi = std::accumulate(samples.begin(), samples.end(), std::size_t{0});
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (fill(samples, workers, mid, nullptr) <= workers) hi = mid;
    else lo = mid + 1;
  }
  fill(samples, workers, lo, &owners);
  return owners;
}

}  // namespace gpuclean::imaging

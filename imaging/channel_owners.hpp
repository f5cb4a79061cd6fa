#pragma once
// Which GPU of `gpuclean image` holds each output channel (multi-gpu-plan.md §2.4): contiguous
// blocks of channels in order, balanced by sample count, so a GPU's channels are neighbours and
// the slowest GPU's share of the gridding is as small as a contiguous split allows.
#include <cstddef>
#include <vector>

namespace gpuclean::imaging {

/// The owner (0 ..< workers) of each channel of `samples` (its sample counts, in channel order):
/// non-decreasing, the largest block's sum as small as possible, and every worker given at least
/// one channel while there are as many channels as workers. Throws std::invalid_argument for no
/// worker.
std::vector<std::size_t> channel_owners(const std::vector<std::size_t>& samples, std::size_t workers);

}  // namespace gpuclean::imaging

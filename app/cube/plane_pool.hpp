#pragma once
// Per-plane host work of a cube run (reads, PSF preparation, beam fits, writes) spread over
// threads. Each index is handled by one call, so results land where a serial loop puts them; a
// failure is reported as the serial loop would have met it first (the lowest failing index).

#include <cstddef>
#include <functional>
#include <vector>

namespace gpuclean::app {

/// Threads for `tasks` per-plane tasks: `threads` (--threads; 0: every core), at most `tasks`, at
/// least 1.
std::size_t plane_threads(std::size_t tasks, int threads);

/// Calls fn(i) for every i < count over `threads` threads (the caller's among them). If some
/// calls throw, the exception of the lowest index is rethrown once all have stopped; indices
/// above a known failure are skipped, as a serial loop would never reach them.
void for_each_plane(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& fn);
/// The same, with the indices taken in `order` (a permutation of 0..count-1: long tasks first,
/// so that they do not run alone at the end); failures still rank by index.
void for_each_plane(const std::vector<std::size_t>& order, std::size_t threads,
                    const std::function<void(std::size_t)>& fn);

}  // namespace gpuclean::app

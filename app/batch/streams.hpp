#pragma once
// How many observations a batch cleans at once on each GPU, and how many reader and writer
// threads keep them fed. One observation's CLEAN is a chain of dependent steps (Clark's minor
// cycles run in one block on one SM), so a GPU is only full with several chains in flight,
// each a clean worker with its own stream, plans and caches.

#include <cstddef>
#include <string>

namespace gpuclean::app {

/// --streams-per-gpu accepts 0 (automatic) to this.
constexpr int kMaxStreamsPerGpu = 32;
/// The automatic choice stays at or below this: beyond it, the host's syncs and the readers
/// and writers, not the GPU, limit the rate.
constexpr int kMaxAutomaticStreams = 8;
/// Streaming multiprocessors per automatic stream: each needs a few SMs beyond its minor cycle's
/// one for the image-wide passes of the others to run alongside.
constexpr int kMultiprocessorsPerStream = 16;
/// Share of the free device memory the automatic choice plans to use.
constexpr double kMemoryMargin = 0.8;

/// The automatic number of clean workers on one GPU: what kMemoryMargin of `free_bytes` holds
/// at `bytes_per_stream` each, at most multiprocessors / kMultiprocessorsPerStream and
/// kMaxAutomaticStreams, at least 1. `why` (when given) receives the reasoning in one line.
int automatic_streams(std::size_t free_bytes, std::size_t bytes_per_stream, int multiprocessors,
                      std::string* why = nullptr);

/// The automatic number of reader threads (and of writer threads) for `workers` clean workers
/// on a host with `cores` logical cores: one per two workers, within what the cores left
/// beside the workers allow, 1 to 8.
int automatic_io_threads(std::size_t workers, unsigned cores);

}  // namespace gpuclean::app

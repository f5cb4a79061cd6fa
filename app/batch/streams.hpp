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
/// Automatic streams per eight host cores (the cores each GPU has, when a host has several): a
/// worker keeps its own thread, its share of the staging copies and, at the rate it cleans, about
/// one reader and one writer busy. 64 x 2048^2 Briggs fields on an H200 host of 16 cores, 6 I/O
/// threads: 4, 5, 6, 8 workers made 20.1, 21.4, 21.7, 19.2 observations/s, while the clean stage
/// alone in memory went on to 40/s on 8; beyond about 6 the host, not the GPU, sets the rate.
constexpr int kStreamsPerEightCores = 3;
/// Share of the free device memory the automatic choice plans to use.
constexpr double kMemoryMargin = 0.8;

/// The automatic number of clean workers on one GPU: what kMemoryMargin of `free_bytes` holds
/// at `bytes_per_stream` each, at most multiprocessors / kMultiprocessorsPerStream,
/// `cores` x kStreamsPerEightCores / 8 and kMaxAutomaticStreams, at least 1. `cores`: the host's
/// logical cores over its GPUs. `why` (when given) receives the reasoning in one line.
int automatic_streams(std::size_t free_bytes, std::size_t bytes_per_stream, int multiprocessors, unsigned cores,
                      std::string* why = nullptr);

/// The automatic number of reader threads (and of writer threads) for `workers` clean workers
/// on a host with `cores` logical cores: one each per worker (a worker cleans a 2048^2 field in
/// about the time a writer writes its three outputs), at most half the cores, at least 1.
/// Readers and writers mostly wait on the disk, so they may outnumber the cores the workers
/// leave. No fixed cap: 256 x 2048^2 on 4 H100s (64 cores, /dev/shm, e11adc6) made 55.7
/// observations/s with 8 I/O threads and 64.1 with 16, each observation costing a reader
/// 94-120 ms and a writer 81-99 ms, so 4 GPUs at one GPU's 37.2/s need about 16 of each.
int automatic_io_threads(std::size_t workers, unsigned cores);

/// The OpenMP team of each reader and writer thread (its own loops: the mask, the outputs'
/// statistics): its share of the `cores` among the 2 x `io_threads` of them, at least 1. Teams of
/// every core each would put 2 x io_threads x cores threads on the cores.
int io_openmp_team(int io_threads, unsigned cores);

}  // namespace gpuclean::app

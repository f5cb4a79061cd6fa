#include "app/batch/streams.hpp"

#include <algorithm>
#include <cstdio>

namespace gpuclean::app {

int automatic_streams(std::size_t free_bytes, std::size_t bytes_per_stream, int multiprocessors, unsigned cores,
                      std::string* why) {
  const double usable = kMemoryMargin * static_cast<double>(free_bytes);
  const std::size_t by_memory =
      bytes_per_stream > 0 ? static_cast<std::size_t>(usable / static_cast<double>(bytes_per_stream)) : 0;
  const int by_sms = std::max(multiprocessors, 0) / kMultiprocessorsPerStream;
  const int by_cores = static_cast<int>(std::min<unsigned>(cores, 1024) * kStreamsPerEightCores / 8);
  const int n = std::max(1, std::min({static_cast<int>(std::min<std::size_t>(by_memory, kMaxAutomaticStreams)),
                                      by_sms, by_cores, kMaxAutomaticStreams}));
  if (why) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "%.0f%% of %.2f GiB free / %.2f GiB per stream allows %zu; %d SMs / %d allows %d; %u cores x %d / 8 "
                  "allows %d; at most %d",
                  100.0 * kMemoryMargin, static_cast<double>(free_bytes) / (1ull << 30),
                  static_cast<double>(bytes_per_stream) / (1ull << 30), by_memory, multiprocessors,
                  kMultiprocessorsPerStream, by_sms, cores, kStreamsPerEightCores, by_cores, kMaxAutomaticStreams);
    *why = line;
  }
  return n;
}

int automatic_io_threads(std::size_t workers, unsigned cores) {
  const std::size_t n = std::min<std::size_t>(workers, cores / 2);
  return static_cast<int>(std::max<std::size_t>(n, 1));
}

int io_openmp_team(int io_threads, unsigned cores) {
  return static_cast<int>(std::max<unsigned>(1, cores / static_cast<unsigned>(2 * std::max(io_threads, 1))));
}

}  // namespace gpuclean::app

#include "app/cube/plane_pool.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace gpuclean::app {

std::size_t plane_threads(std::size_t tasks, int threads) {
  const std::size_t want = threads > 0 ? static_cast<std::size_t>(threads)
                                       : std::max<std::size_t>(std::thread::hardware_concurrency(), 1);
  return std::clamp<std::size_t>(std::min(want, tasks), 1, std::max<std::size_t>(tasks, 1));
}

void for_each_plane(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& fn) {
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = i;
  for_each_plane(order, threads, fn);
}

void for_each_plane(const std::vector<std::size_t>& order, std::size_t threads,
                    const std::function<void(std::size_t)>& fn) {
  const std::size_t count = order.size();
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failed{count};  // lowest failing index so far
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const std::size_t n = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(count, 1));
  // The tasks' own OpenMP loops (the image statistics, for one) share the cores with the pool's
  // threads: each thread's teams get cores / threads, not every core (64 x 64 threads on a
  // 64-core host otherwise).
  const int team = std::max(1, omp_get_num_procs() / static_cast<int>(n));
  auto work = [&] {
    const int before = omp_get_max_threads();
    omp_set_num_threads(team);
    for (std::size_t k = next++; k < count; k = next++) {
      const std::size_t i = order[k];
      if (i > first_failed.load()) continue;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (i < first_failed.load()) {
          first_failed = i;
          failure = std::current_exception();
        }
      }
    }
    omp_set_num_threads(before);  // the caller's thread goes on as it was
  };
  std::vector<std::thread> pool;
  try {
    for (std::size_t t = 1; t < n; ++t) pool.emplace_back(work);
  } catch (const std::system_error&) {  // no more threads: those started (and this one) do the rest
  }
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace gpuclean::app

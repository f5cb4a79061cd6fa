#pragma once
// Runs tasks 0..count-1 on up to `threads` threads, each task once, taken in index order as
// threads come free. fn(task, worker) with worker in [0, threads): a worker's state (an FFT
// workspace) can be indexed by it. After a task throws no new task starts; the exception of the
// lowest failing task is rethrown once every thread is done, so the error does not depend on timing.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace gpuclean::data {

template <class Fn>
void run_tasks(std::size_t count, std::size_t threads, Fn&& fn) {
  threads = std::max<std::size_t>(1, std::min(threads, count));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  std::size_t error_task = count;
  const auto work = [&](std::size_t worker) {
    for (std::size_t task; !failed && (task = next++) < count;) {
      try {
        fn(task, worker);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (task < error_task) error_task = task, error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  try {
    for (std::size_t w = 1; w < threads; ++w) pool.emplace_back(work, w);
  } catch (const std::system_error&) {  // no more threads to be had: those started do the work
  }
  work(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace gpuclean::data

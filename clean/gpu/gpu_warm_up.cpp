// clean/gpu_memory.hpp's warm-up. The first CUDA context and cuFFT's first plans of a process
// cost time that the run would otherwise pay at its start: on the H100, in the first process on a
// fresh machine, 0.21 s for the context and a first plan; a second process paid 0.002 s (the
// kernels are then in CUDA's caches). Done here on a thread of its own, it overlaps with whatever
// the caller does until its first run (WSClean: gridding the first image).

#include <cufft.h>
#include <cuda_runtime.h>

#include <mutex>
#include <thread>
#include <vector>

#include "clean/gpu_memory.hpp"
#include "select/cuda/device_info.hpp"
#include "select/registry.hpp"

namespace gpuclean::clean {
namespace {

void warm_up() {
  if (!cuda::has_usable_device()) return;
  if (cudaFree(nullptr) != cudaSuccess) return;  // the context; a failure shows again in the run
  cufftHandle plan = 0;
  if (cufftPlan2d(&plan, 512, 512, CUFFT_R2C) == CUFFT_SUCCESS) cufftDestroy(plan);
  try {  // the selection's first queries (CUB's kernels)
    auto backend = select::builtin_registry().make(CleanSettings{}.select_backend);
    (void)backend->top_k_workspace_bytes(std::size_t{1} << 22, 1024);
    (void)backend->robust_statistics_workspace_bytes(std::size_t{1} << 22);
  } catch (...) {  // only a head start: the run reports its own failures
  }
}

// Joined at exit if nobody waited for it, so the thread never outlives the process's statics.
struct WarmUp {
  std::once_flag started;
  std::thread thread;
  std::mutex joining;
  void join() {
    std::lock_guard<std::mutex> lock(joining);
    if (thread.joinable()) thread.join();
  }
  ~WarmUp() { join(); }
};

WarmUp& state() {
  static WarmUp w;
  return w;
}

}  // namespace

void start_gpu_warm_up() {
  WarmUp& w = state();
  std::call_once(w.started, [&w] { w.thread = std::thread(warm_up); });
}

void wait_for_gpu_warm_up() { state().join(); }

void warm_up_gpus(const std::vector<int>& gpus) {
  std::vector<std::thread> threads;
  for (int g : gpus)
    threads.emplace_back([g] {
      try {  // a warm-up only: what fails here, the run itself meets and reports
        if (cudaSetDevice(g) == cudaSuccess) warm_up();
      } catch (...) {
      }
    });
  for (auto& t : threads) t.join();
}

}  // namespace gpuclean::clean

#include "clean/deconvolution.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "select/cuda/device_info.hpp"

namespace gpuclean::clean {

void for_each_worker(std::size_t count, std::size_t workers, Algorithm algorithm, Device device,
                     const std::function<void(std::size_t, Deconvolver&)>& run, DeconvolverPool* pool,
                     const std::vector<int>& gpus) {
  workers = std::max<std::size_t>(workers, 1);
  DeconvolverPool local;
  if (!pool) pool = &local;
  if (pool->size() < workers) pool->resize(workers);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&](std::size_t w) {
    try {
      std::optional<cuda::ScopedDevice> on;
      if (device == Device::kGpu && !gpus.empty()) on.emplace(gpus[w % gpus.size()]);
      std::unique_ptr<Deconvolver>& deconvolver = (*pool)[w];
      if (!deconvolver) deconvolver = make_deconvolver(algorithm, device);
      for (std::size_t j = next++; j < count; j = next++) run(j, *deconvolver);
      // A pool of this call's own: each worker releases its deconvolver (streams, pinned staging,
      // cuFFT plans) on its own thread and device as it ends, instead of the caller releasing
      // them one after another once all have ended.
      if (pool == &local) deconvolver.reset();
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(worker, w);
  worker(0);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

void prepare_workers(DeconvolverPool& pool, std::size_t workers, Algorithm algorithm, Device device,
                     const std::vector<int>& gpus, std::size_t width, std::size_t height) {
  if (device != Device::kGpu || workers == 0) return;
  if (pool.size() < workers) pool.resize(workers);
  const int here = cuda::current_gpu();
  // A thread a worker, as for_each_worker runs them: what the driver or cuFFT serialises
  // serialises anyway, the rest overlaps.
  auto prepare = [&](std::size_t w) {
    try {
      const cuda::ScopedDevice on(gpus.empty() ? here : gpus[w % gpus.size()]);
      if (!pool[w]) pool[w] = make_deconvolver(algorithm, device);
      pool[w]->prepare(width, height);
    } catch (...) {
      pool[w].reset();  // its first run makes it again, and reports what fails
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(prepare, w);
  prepare(0);
  for (auto& t : threads) t.join();
}

Deconvolution::Deconvolution(const CleanSettings& settings, const WorkTable& table, RunPlan plan,
                             const ProblemExtras* extras)
    : settings_(settings), table_(table), plan_(std::move(plan)), extras_(extras) {}

std::vector<CleanResult> Deconvolution::run(const CycleCallback& on_cycle, const GroupDone& on_group,
                                            DeconvolverPool* pool) {
  const std::size_t groups = table_.groups.size();
  std::vector<CleanResult> results(groups);
  group_gpus_.assign(groups, -1);
  for_each_worker(groups, plan_.workers, settings_.algorithm, plan_.device, [&](std::size_t g, Deconvolver& d) {
    GroupProblem gp(table_, g, settings_, extras_);
    gp.set_device_planes(plan_.device_planes);
    gp.set_split_gpus(plan_.split_gpus);
    results[g] = d.run(gp.problem(), settings_, on_cycle);
    if (plan_.device == Device::kGpu) group_gpus_[g] = cuda::current_gpu();
    if (on_group) on_group(g, results[g]);
  }, pool, plan_.gpus);
  return results;
}

}  // namespace gpuclean::clean

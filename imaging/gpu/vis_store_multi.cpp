// The VisStore over several GPUs (vis_store_multi.hpp): a worker thread per lane forwards the
// calls to that lane's GPU backend; the caller waits for its own call only.
#include "imaging/gpu/vis_store_multi.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <future>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "imaging/gpu/gridder_host.hpp"
#include "imaging/gpu/vis_store_gpu.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::imaging {
namespace {

/// One thread running posted tasks in order (a backend's CUDA state stays with one thread).
class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Queues `f` (after every task queued before it); its future holds its result or exception.
  template <class F>
  auto post(F&& f) -> std::future<decltype(f())> {
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::forward<F>(f));
    auto done = task->get_future();
    {
      std::lock_guard lock(mutex_);
      tasks_.emplace_back([task] { (*task)(); });
    }
    ready_.notify_one();
    return done;
  }
  /// Runs `f` on the worker and waits for it; its exception is rethrown here.
  template <class F>
  auto call(F&& f) -> decltype(f()) {
    return post(std::forward<F>(f)).get();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stop_ and nothing left
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

class MultiGpuVisStoreBackend final : public VisStoreBackend {
 public:
  MultiGpuVisStoreBackend(const GpuGridderOptions& options, const std::vector<int>& gpus,
                          std::vector<std::size_t> owners)
      : gpus_(gpus), owners_(std::move(owners)), lanes_(gpus.size()) {
    if (gpus_.empty()) throw std::invalid_argument("GPU VisStore: no GPU");
    first_.assign(gpus_.size(), owners_.size());
    for (std::size_t c = 0; c < owners_.size(); ++c) {
      if (owners_[c] >= gpus_.size() || (c > 0 && owners_[c] < owners_[c - 1]))
        throw std::invalid_argument("GPU VisStore: channel owners must be contiguous blocks of the lanes");
      first_[owners_[c]] = std::min(first_[owners_[c]], c);
    }
    for (std::size_t l = 0; l < gpus_.size(); ++l) {
      lanes_[l].worker = std::make_unique<Worker>();
      GpuGridderOptions o = options;
      o.device = gpus_[l];
      // The automatic budget (free memory, or GPUCLEAN_TEST_IMAGING_BUDGET) is split between a
      // device's lanes; a given budget is each lane's.
      const auto sharing = options.budget_bytes != 0
                               ? std::size_t{1}
                               : static_cast<std::size_t>(std::count(gpus_.begin(), gpus_.end(), gpus_[l]));
      lanes_[l].backend = lanes_[l].worker->call([o, sharing]() mutable {
        cuda::set_device(o.device);  // the worker's device for good: its stream, plans, staging
        if (sharing > 1) o.budget_bytes = gpu::imaging_budget(o) / sharing;
        return make_gpu_vis_store_backend(o);
      });
    }
  }
  ~MultiGpuVisStoreBackend() override {
    for (Lane& lane : lanes_)
      if (lane.worker) lane.worker->call([&lane] { lane.backend.reset(); });  // freed on its own thread
  }

  // Not waited for: the lanes prepare their channels at once (the store keeps plan and samples in
  // place); the lane's next call waits for them and rethrows their errors.
  void add_channel(std::size_t c, const GridPlan& plan, const ChannelSamples& s) override {
    Lane& lane = lanes_.at(owner(c));
    const std::size_t local = c - first_[owner(c)];
    lane.added.push_back(lane.worker->post([&lane, local, &plan, &s] { lane.backend->add_channel(local, plan, s); }));
  }

  std::vector<double> invert(std::size_t c, const GridPlan& plan, const ChannelSamples& s,
                             std::span<const std::complex<float>> host_model, VisValues values) override {
    Lane& lane = settled(owner(c));
    const std::size_t local = c - first_[owner(c)];
    return lane.worker->call([&] { return lane.backend->invert(local, plan, s, host_model, values); });
  }

  void predict(std::size_t c, const GridPlan& plan, const ChannelSamples& s, std::span<const double> model,
               std::vector<std::complex<float>>& host_model) override {
    Lane& lane = settled(owner(c));
    const std::size_t local = c - first_[owner(c)];
    lane.worker->call([&] { lane.backend->predict(local, plan, s, model, host_model); });
  }

  std::string describe() const override {
    std::vector<std::string> lines(lanes_.size());
    for (std::size_t l = 0; l < lanes_.size(); ++l) {
      if (std::find(owners_.begin(), owners_.end(), l) == owners_.end()) continue;
      const Lane& lane = settled(l);
      lines[l] = lane.worker->call([&lane] { return lane.backend->describe(); });
    }
    return describe_lanes(gpus_, owners_, lines);
  }

  std::size_t lanes() const override { return lanes_.size(); }
  std::size_t lane_of(std::size_t c) const override { return owner(c); }
  int lane_gpu(std::size_t lane) const override { return gpus_.at(lane); }

 private:
  struct Lane {
    std::unique_ptr<Worker> worker;
    std::unique_ptr<VisStoreBackend> backend;
    std::vector<std::future<void>> added;  // add_channel's preparations not yet waited for
  };
  // Lane l once its preparations ended (the first error among them is thrown). Called by the
  // lane's one caller, or by describe() before any lane works.
  Lane& settled(std::size_t l) const {
    Lane& lane = lanes_.at(l);
    std::vector<std::future<void>> added = std::move(lane.added);
    lane.added.clear();
    std::exception_ptr error;
    for (std::future<void>& f : added) try {
        f.get();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    if (error) std::rethrow_exception(error);
    return lane;
  }
  std::size_t owner(std::size_t c) const {
    if (c >= owners_.size()) throw std::logic_error("GPU VisStore: channel " + std::to_string(c) + " has no owner");
    return owners_[c];
  }

  std::vector<int> gpus_;
  std::vector<std::size_t> owners_, first_;  // first_[l]: lane l's first channel (its local 0)
  mutable std::vector<Lane> lanes_;  // mutable: describe() settles the lanes
};

}  // namespace

std::string describe_lanes(const std::vector<int>& gpus, const std::vector<std::size_t>& owners,
                           const std::vector<std::string>& lane_lines) {
  std::ostringstream ids, each;
  for (std::size_t l = 0; l < gpus.size(); ++l) {
    ids << (l ? "," : "") << gpus[l];
    const auto first = std::find(owners.begin(), owners.end(), l);
    if (first == owners.end()) continue;
    const auto c = static_cast<std::size_t>(first - owners.begin());
    const auto n = static_cast<std::size_t>(std::count(first, owners.end(), l));
    each << (each.tellp() > 0 ? "; " : "") << (n > 1 ? "channels " : "channel ") << c;
    if (n > 1) each << "-" << c + n - 1;
    each << " " << lane_lines.at(l);
  }
  return "on " + std::to_string(gpus.size()) + " GPUs (" + ids.str() + "): " + each.str();
}

std::unique_ptr<VisStoreBackend> make_multi_gpu_vis_store_backend(const GpuGridderOptions& options,
                                                                  const std::vector<int>& gpus,
                                                                  std::vector<std::size_t> owners) {
  return std::make_unique<MultiGpuVisStoreBackend>(options, gpus, std::move(owners));
}

}  // namespace gpuclean::imaging

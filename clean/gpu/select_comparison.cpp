#include "clean/gpu/select_comparison.hpp"

#include <algorithm>

#include "clean/errors.hpp"
#include "select/registry.hpp"

namespace gpuclean::clean::gpu {

struct SelectComparison::Entry {
  std::string name;
  std::unique_ptr<select::Selector> selector;
  select::Workspace workspace;
  Entry(std::string n, std::unique_ptr<select::Selector> s, cudaStream_t stream)
      : name(std::move(n)), selector(std::move(s)), workspace(stream) {}
};

std::vector<std::string> compared_backends(bool with_cpu) {
  const auto& reg = select::builtin_registry();
  std::vector<std::string> names = {"sort"};
  for (const std::string& n : reg.names()) {
    // auto forwards to one of the others: timing it would time that one twice.
    if (n == "cpu" || n == "sort" || n == "auto" || !reg.make(n)->exact()) continue;
    names.push_back(n);
  }
  if (with_cpu) names.push_back("cpu");
  return names;
}

SelectComparison::SelectComparison(cudaStream_t stream, const CleanSettings& settings, std::size_t k_max)
    : stream_(stream), chosen_name_(settings.select_backend), values_(k_max, stream), indices_(k_max, stream) {
  for (const std::string& n : compared_backends(settings.compare_select_cpu))
    entries_.push_back(std::make_unique<Entry>(n, select::builtin_registry().make(n), stream));
  GPUCLEAN_CUDA_TRY(cudaEventCreate(&start_));
  GPUCLEAN_CUDA_TRY(cudaEventCreate(&stop_));
}

SelectComparison::~SelectComparison() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}

namespace {

std::vector<std::uint32_t> sorted_indices(cudaStream_t s, const std::uint32_t* d, std::size_t count) {
  std::vector<std::uint32_t> h(count);
  if (count) GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(h.data(), d, count * 4, cudaMemcpyDeviceToHost, s));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
  std::sort(h.begin(), h.end());
  return h;
}

}  // namespace

SelectCycleComparison SelectComparison::run(std::size_t cycle, const float* d_in, std::size_t n,
                                            const select::SelectRequest& request, const std::uint32_t* d_chosen,
                                            std::size_t chosen_count) {
  SelectCycleComparison out;
  out.cycle = cycle;
  out.n = n;
  out.k = request.k;
  out.count = chosen_count;
  const std::vector<std::uint32_t> chosen = sorted_indices(stream_, d_chosen, chosen_count);
  for (auto& e : entries_) {
    // First use pays for lazy set-up (workspace growth, module loading): not part of the times.
    if (!warmed_up_)
      e->selector->top_k(stream_, d_in, n, request, e->workspace, values_.data(), indices_.data());
    std::vector<float> times;
    select::SelectStats stats;
    for (int r = 0; r < kRepeats; ++r) {
      GPUCLEAN_CUDA_TRY(cudaEventRecord(start_, stream_));
      stats = e->selector->top_k(stream_, d_in, n, request, e->workspace, values_.data(), indices_.data());
      GPUCLEAN_CUDA_TRY(cudaEventRecord(stop_, stream_));
      GPUCLEAN_CUDA_TRY(cudaEventSynchronize(stop_));
      float ms = 0.0f;
      GPUCLEAN_CUDA_TRY(cudaEventElapsedTime(&ms, start_, stop_));
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    out.times.push_back({e->name, times[times.size() / 2] * 1e-3});

    const std::vector<std::uint32_t> got = sorted_indices(stream_, indices_.data(), stats.count);
    if (got != chosen) {
      std::size_t differ = 0;
      std::vector<std::uint32_t> diff;
      std::set_symmetric_difference(got.begin(), got.end(), chosen.begin(), chosen.end(), std::back_inserter(diff));
      differ = diff.size();
      throw SelectMismatch("--compare-select: at major cycle " + std::to_string(cycle) + " (top " +
                           std::to_string(request.k) + " of " + std::to_string(n) + " pixels) backend '" + e->name +
                           "' returned " + std::to_string(got.size()) + " pixels and '" + chosen_name_ +
                           "' (the one CLEAN uses) " + std::to_string(chosen.size()) + "; " +
                           std::to_string(differ) + " pixels are in one set only. This is a defect in the selection "
                           "library: please report it with this line.");
    }
  }
  warmed_up_ = true;
  return out;
}

}  // namespace gpuclean::clean::gpu

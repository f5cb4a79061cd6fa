// The `auto` backend: every call goes whole to one exact backend, so its results are that
// backend's (the tie rule makes them all equal anyway) and its scratch is that backend's.

#include "select/backends/auto_select.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "select/backends/backends.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/detail/engine.hpp"
#include "select/registry.hpp"

namespace gpuclean::select {
namespace {

constexpr std::size_t kLookBytes = kLookSamples * sizeof(std::uint32_t);
constexpr std::uint64_t kLookSeed = 0xA070C1A55ull;

AutoOperation order_statistics_operation(std::size_t n_ranks) {
  return n_ranks <= 1 ? AutoOperation::kOrderStatistic : AutoOperation::kOrderStatistics;
}

class AutoSelector final : public Selector {
 public:
  AutoSelector() {
    // The rules name backends of the registry (a test checks each is there and exact).
    for (const AutoRule& r : kAutoRules)
      for (std::string_view name : {r.continuous, r.repeated})
        if (!backends_.count(name)) backends_.emplace(name, builtin_registry().make(name));
  }

  std::string_view name() const override { return "auto"; }

  std::size_t top_k_workspace_bytes(std::size_t n, std::size_t k) const override {
    return bytes(AutoOperation::kTopK, n, k, [&](const Selector& s) { return s.top_k_workspace_bytes(n, k); });
  }
  std::size_t order_statistics_workspace_bytes(std::size_t n, std::size_t n_ranks) const override {
    return bytes(order_statistics_operation(n_ranks), n, n_ranks,
                 [&](const Selector& s) { return s.order_statistics_workspace_bytes(n, n_ranks); });
  }
  std::size_t robust_statistics_workspace_bytes(std::size_t n) const override {
    return bytes(AutoOperation::kRobustStatistics, n, 1,
                 [&](const Selector& s) { return s.robust_statistics_workspace_bytes(n); });
  }

  SelectStats run_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& req,
                        Workspace& ws, float* d_out_values, std::uint32_t* d_out_indices) const override {
    const Selector& s = chosen(stream, d_in, n, AutoOperation::kTopK, req.k, req.order, ws);
    return s.top_k(stream, d_in, n, req, ws, d_out_values, d_out_indices);
  }

  SelectStats order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                               const std::vector<std::size_t>& ranks, Workspace& ws, float* h_out) const override {
    const Selector& s =
        chosen(stream, d_in, n, order_statistics_operation(ranks.size()), ranks.size(), Order::kSmallest, ws);
    return s.order_statistics(stream, d_in, n, ranks, ws, h_out);
  }

  RobustStats robust_statistics(cudaStream_t stream, const float* d_in, std::size_t n, Workspace& ws,
                                SelectStats* stats) const override {
    const Selector& s = chosen(stream, d_in, n, AutoOperation::kRobustStatistics, 1, Order::kSmallest, ws);
    return s.robust_statistics(stream, d_in, n, ws, stats);
  }

 private:
  // The most any backend this call may go to needs; the look's sample is read back before the
  // chosen backend takes the workspace, so the two never need room at once.
  template <class F>
  std::size_t bytes(AutoOperation op, std::size_t n, std::size_t k, F&& of) const {
    const AutoRule& r = auto_rule(op, n, k);
    std::size_t b = of(*backends_.at(r.continuous));
    if (auto_needs_look(op, n, k)) b = std::max({b, of(*backends_.at(r.repeated)), kLookBytes});
    return b;
  }

  const Selector& chosen(cudaStream_t stream, const float* d_in, std::size_t n, AutoOperation op, std::size_t k,
                         Order order, Workspace& ws) const {
    return *backends_.at(auto_backend_for(stream, d_in, n, op, k, order, ws));
  }

  std::map<std::string_view, std::unique_ptr<Selector>> backends_;
};

}  // namespace

std::unique_ptr<Selector> make_auto_selector() { return std::make_unique<AutoSelector>(); }

DataClass sample_data_class(cudaStream_t stream, const float* d_in, std::size_t n, Order order, Workspace& ws) {
  if (n == 0) return DataClass::kContinuous;
  auto* d_keys = reinterpret_cast<std::uint32_t*>(ws.reserve(kLookBytes));
  detail::sample_keys(stream, d_in, n, detail::key_mode(order), kLookSeed, d_keys, kLookSamples);
  std::vector<std::uint32_t> keys(kLookSamples);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(keys.data(), d_keys, kLookBytes, cudaMemcpyDeviceToHost, stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  return classify_sample(keys, detail::kInvalidKey);
}

std::string_view auto_backend_for(cudaStream_t stream, const float* d_in, std::size_t n, AutoOperation op,
                                  std::size_t k, Order order, Workspace& ws) {
  const DataClass data =
      auto_needs_look(op, n, k) ? sample_data_class(stream, d_in, n, order, ws) : DataClass::kContinuous;
  return auto_choice(op, n, k, data);
}

}  // namespace gpuclean::select

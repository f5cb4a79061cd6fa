// The randomized backend's Selector: which path a call takes (the device chain, or the exact
// host-driven path where the chain does not apply or a device check failed), and the workspace
// that covers both.

#include "select/backends/randomized_select.hpp"

#include <algorithm>

#include "select/backends/backends.hpp"
#include "select/backends/randomized_selector.hpp"
#include "select/detail/robust_fused.hpp"

namespace gpuclean::select {
namespace detail {

SelectStats after_fallback(SelectStats fallback, int passes, std::size_t scratch_bytes, int retries) {
  fallback.retries += retries + 1;
  fallback.passes += passes;
  fallback.scratch_bytes = std::max(fallback.scratch_bytes, scratch_bytes);
  return fallback;
}

RandomizedSelector::RandomizedSelector(const RandomizedTuning& t) : t_(t), sample_fallback_(make_sample_selector()) {}

bool RandomizedSelector::chain_applies(std::size_t n, std::size_t k) const {
  return t_.device_chain && n > t_.direct_below && k < n && n <= (std::size_t{1} << 32);
}

std::size_t RandomizedSelector::top_k_workspace_bytes(std::size_t n, std::size_t k) const {
  const std::size_t host = host_top_k_bytes(n, std::min(k, n));
  std::size_t bytes = std::max(host, sample_fallback_->top_k_workspace_bytes(n, k));  // all O(k + sqrt n)
  if (chain_applies(n, std::min(k, n))) bytes = std::max(bytes, chain_top_k_bytes(n, std::min(k, n), true));
  return bytes;
}

std::size_t RandomizedSelector::order_statistics_workspace_bytes(std::size_t n, std::size_t n_ranks) const {
  std::size_t bytes = host_order_statistics_bytes(n, n_ranks);
  if (n_ranks == 1 && chain_applies(n, 1)) bytes = std::max(bytes, fused_rank_bytes(n, robust_z()));
  return bytes;
}

std::size_t RandomizedSelector::robust_statistics_workspace_bytes(std::size_t n) const {
  std::size_t bytes = Selector::robust_statistics_workspace_bytes(n);
  if (chain_applies(n, 1)) bytes = std::max(bytes, fused_robust_bytes(n, robust_z()));
  return bytes;
}

SelectStats RandomizedSelector::run_top_k(cudaStream_t stream, const float* d_in, std::size_t n,
                                          const SelectRequest& req, Workspace& ws, float* d_out_values,
                                          std::uint32_t* d_out_indices) const {
  const std::size_t k = std::min(req.k, n);
  if (k == 0) return SelectStats{};
  if (!chain_applies(n, k)) return host_top_k(stream, d_in, n, req, ws, d_out_values, d_out_indices);
  if (auto st = chain_top_k(stream, d_in, n, k, req, ws, d_out_values, d_out_indices)) return *st;
  // A device check failed: the host-driven path, exact whatever the sample.
  const SelectStats st = host_top_k(stream, d_in, n, req, ws, d_out_values, d_out_indices);
  return after_fallback(st, 1, chain_top_k_bytes(n, k, req.sorted_output));
}

SelectStats RandomizedSelector::order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                                 const std::vector<std::size_t>& ranks, Workspace& ws,
                                                 float* h_out) const {
  // One rank (the median): one read of the input (detail/robust_fused.hpp), the host-driven path
  // when its bracket missed.
  if (ranks.size() == 1 && chain_applies(n, 1) && ranks[0] < n) {
    if (ws.capacity() < fused_rank_bytes(n, robust_z())) ws.reserve(order_statistics_workspace_bytes(n, 1));
    SelectStats fused;
    if (const auto v = fused_order_statistic(stream, d_in, n, ranks[0], ws, robust_z(), t_.seed, &fused)) {
      h_out[0] = *v;
      return fused;
    }
    const SelectStats st = host_order_statistics(stream, d_in, n, ranks, ws, h_out);
    return after_fallback(st, fused.passes, fused.scratch_bytes);
  }
  return host_order_statistics(stream, d_in, n, ranks, ws, h_out);
}

}  // namespace detail

std::unique_ptr<Selector> make_randomized_selector(const RandomizedTuning& tuning) {
  return std::make_unique<detail::RandomizedSelector>(tuning);
}
std::unique_ptr<Selector> make_randomized_selector() { return make_randomized_selector(RandomizedTuning{}); }

}  // namespace gpuclean::select

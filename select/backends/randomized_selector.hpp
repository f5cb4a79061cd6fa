#pragma once
// The randomized backend's Selector (the algorithm: randomized_select.hpp), one file per job:
//   randomized_select.cpp       which path a call takes, and the workspace that covers both
//   randomized_chain.cpp        the device chain's host side (detail/window_select.hpp)
//   randomized_host_path.cu     the host-driven path: exact whatever the sample, the chain's fallback
//   randomized_windows.cpp      the windows' statistics: binomial windows, sample sizes, buffers

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "select/backends/randomized_select.hpp"
#include "select/selector.hpp"

namespace gpuclean::select::detail {

// ---- randomized_windows.cpp (the public ones are in randomized_select.hpp) ----

/// Splitters of the host-driven path: per_sqrt_n x sqrt(n), at least 256, at most n.
std::size_t splitter_count(std::size_t n, double per_sqrt_n);
/// The two-sided normal quantile: P(|N(0,1)| <= z) = p.
double normal_quantile_two_sided(double p);
/// The fused robust statistics' bracket half-width in standard deviations: each of its two
/// brackets misses with probability (1 - p_k)^2 / 2 (the fallback is slow, so rarer than p_k).
double robust_z(const RandomizedTuning& t);

// ---- randomized_select.cpp ----

/// The stats of a call whose first try (`passes`, `retries` and `scratch_bytes` of it) gave up
/// and a fallback answered: the fallback's, plus the first try's work and one more retry.
SelectStats after_fallback(SelectStats fallback, int passes, std::size_t scratch_bytes, int retries = 0);

class RandomizedSelector final : public Selector {
 public:
  explicit RandomizedSelector(const RandomizedTuning& t);
  std::string_view name() const override { return "randomized"; }

  std::size_t top_k_workspace_bytes(std::size_t n, std::size_t k) const override;
  std::size_t order_statistics_workspace_bytes(std::size_t n, std::size_t n_ranks) const override;
  std::size_t robust_statistics_workspace_bytes(std::size_t n) const override;

  SelectStats run_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& req,
                        Workspace& ws, float* d_out_values, std::uint32_t* d_out_indices) const override;
  SelectStats order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                               const std::vector<std::size_t>& ranks, Workspace& ws, float* h_out) const override;
  RobustStats robust_statistics(cudaStream_t stream, const float* d_in, std::size_t n, Workspace& ws,
                                SelectStats* stats) const override;

 private:
  bool chain_applies(std::size_t n, std::size_t k) const;
  double robust_z() const { return detail::robust_z(t_); }

  // The device chain (randomized_chain.cpp): an empty result when a device check failed.
  std::size_t chain_top_k_bytes(std::size_t n, std::size_t k, bool sorted) const;
  std::optional<SelectStats> chain_top_k(cudaStream_t stream, const float* d_in, std::size_t n, std::size_t k,
                                         const SelectRequest& req, Workspace& ws, float* d_out_values,
                                         std::uint32_t* d_out_indices) const;

  // The host-driven path (randomized_host_path.cu).
  std::size_t host_top_k_bytes(std::size_t n, std::size_t k) const;
  std::size_t host_order_statistics_bytes(std::size_t n, std::size_t n_ranks) const;
  SelectStats host_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& req,
                         Workspace& ws, float* d_out_values, std::uint32_t* d_out_indices) const;
  SelectStats host_order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                    const std::vector<std::size_t>& ranks, Workspace& ws, float* h_out) const;

  RandomizedTuning t_;
  std::unique_ptr<Selector> sample_fallback_;  // for middle bins of massive duplicates
};

}  // namespace gpuclean::select::detail

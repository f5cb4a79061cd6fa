#pragma once
// The selection library's GPU interface: one Selector per backend, chosen by name through the
// Registry (registry.hpp). Needs the CUDA runtime headers; CPU-only code uses cpu_reference.hpp.
//
// Contract, the same for every backend (and checked against the CPU reference in the tests):
//  * top-k writes exactly min(k, n_valid) elements: every element whose key beats the k-th key,
//    then, among elements whose key equals the k-th key, those with the lowest indices. The key
//    of x is x, -x or |x| (select_types.hpp); -0 equals +0; NaN is never selected.
//  * order statistics return the values of the given ranks (0-based, ascending among the
//    non-NaN values); NaN for a rank >= n_valid.
//  * The input is never modified. All work is ordered on `stream`; the calls synchronize it once
//    they need a count on the host, and return with the outputs complete.
//  * Scratch comes from the caller's Workspace: it grows to the size the call needs and is
//    reused by the next call, so a steady loop allocates nothing.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>
#include <string>
#include <string_view>

#include "select/select_types.hpp"

namespace gpuclean::select {

/// Device scratch owned by the caller and reused across calls. Not thread-safe.
class Workspace {
 public:
  explicit Workspace(cudaStream_t stream = nullptr) : stream_(stream) {}
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  /// At least `bytes` of device memory; reallocates (stream-ordered) only to grow.
  std::byte* reserve(std::size_t bytes);
  std::size_t capacity() const { return capacity_; }
  /// Number of times the buffer had to grow (a steady loop stops growing).
  int allocations() const { return allocations_; }
  /// A second workspace, on the same stream, for calls that compose other calls and keep data
  /// of their own in this one meanwhile. Made on first use; grows independently.
  Workspace& nested();

 private:
  cudaStream_t stream_;
  std::unique_ptr<Workspace> nested_;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  int allocations_ = 0;
};

/// The robust noise estimate's two order statistics (clean::robust_sigma on the CPU): over the
/// finite values (NaN and +-Inf ignored), the median at rank (n_finite - 1) / 2, and the value at
/// the same rank of the absolute deviations |x - median|. NaN for both when nothing is finite.
struct RobustStats {
  std::size_t n_finite = 0;
  float median = std::numeric_limits<float>::quiet_NaN();
  float mad = std::numeric_limits<float>::quiet_NaN();
};

/// What a call did, for logs and benchmarks.
struct SelectStats {
  std::size_t count = 0;          ///< top-k: elements written, min(k, n_valid)
  std::size_t scratch_bytes = 0;  ///< workspace bytes the call used
  int retries = 0;                ///< Las Vegas retries (randomized) or fallbacks to the exact path
  int passes = 0;                 ///< full passes over the input
};

class Selector {
 public:
  virtual ~Selector() = default;
  virtual std::string_view name() const = 0;
  /// Exact backends honour the contract above; approximate ones are named so and are left out
  /// of the exactness tests.
  virtual bool exact() const { return true; }

  /// Upper bounds of the scratch a call needs, for sizing a Workspace up front.
  virtual std::size_t top_k_workspace_bytes(std::size_t n, std::size_t k) const = 0;
  virtual std::size_t order_statistics_workspace_bytes(std::size_t n, std::size_t n_ranks) const = 0;

  /// Top-k of d_in[0, n). The outputs hold at least k entries; the element values (sign kept)
  /// go to d_out_values and their indices to d_out_indices. Throws InvalidRequest when
  /// request.k > n, before any work: the check is here, once, for every backend.
  SelectStats top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& request,
                    Workspace& workspace, float* d_out_values, std::uint32_t* d_out_indices) const {
    check_top_k(n, request);
    return run_top_k(stream, d_in, n, request, workspace, d_out_values, d_out_indices);
  }

  /// Values of several ranks at once (multiselect); one rank is the k-th order statistic.
  /// `h_out` (host) receives one value per rank.
  virtual SelectStats order_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                       const std::vector<std::size_t>& ranks, Workspace& workspace,
                                       float* h_out) const = 0;

  /// Median and median absolute deviation of the finite values, in one call (the noise estimate
  /// of every CLEAN major cycle). The default composes this backend's order_statistics over a
  /// finite copy kept in `workspace` (its nested() workspace serves the inner calls); a backend
  /// may override it with a pass that chains the two on the device. `stats` (optional)
  /// receives the passes and retries.
  virtual RobustStats robust_statistics(cudaStream_t stream, const float* d_in, std::size_t n, Workspace& workspace,
                                        SelectStats* stats = nullptr) const;
  virtual std::size_t robust_statistics_workspace_bytes(std::size_t n) const;

 protected:
  /// The backend's top-k (see top_k), on a request that check_top_k accepted (k <= n).
  virtual SelectStats run_top_k(cudaStream_t stream, const float* d_in, std::size_t n, const SelectRequest& request,
                                Workspace& workspace, float* d_out_values, std::uint32_t* d_out_indices) const = 0;
};

}  // namespace gpuclean::select

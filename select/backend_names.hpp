#pragma once
// Every selection backend's name and description: the one list of names, known in every build.
// The registry makes a backend of each row (registry.cpp, by its id), --select and the bench
// offer them, and a CPU-only build checks a job's --select exactly as a GPU build does, so a typo
// is caught wherever the job is first tried.

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclean::select {

enum class BackendId { kAuto, kCpu, kSort, kRandomized, kSample, kSampleApprox, kBucket, kCuttingPlane };

struct BackendName {
  BackendId id;
  std::string_view name;
  std::string_view description;
  bool exact;      ///< the same answer as the CPU reference, always
  bool for_clean;  ///< an exact GPU backend CLEAN may use (--select)
};

inline constexpr std::array<BackendName, 8> kBackendNames{{
    {BackendId::kAuto, "auto",
     "the default: per call, the fastest exact backend for n, k, the operation and the data (measured rule)", true,
     true},
    {BackendId::kCpu, "cpu", "CPU reference (std::nth_element); copies the input to the host", true, false},
    {BackendId::kSort, "sort", "sort-and-choose with CUB radix sort: the baseline", true, true},
    {BackendId::kRandomized, "randomized", "two-pivot Las Vegas top-k (Monroe et al., HPG 2011)", true, true},
    {BackendId::kSample, "sample", "SampleSelect (Ribizel & Anzt 2019)", true, true},
    {BackendId::kSampleApprox, "sample-approx",
     "approximate SampleSelect: order statistics to within one bucket (not exact)", false, false},
    {BackendId::kBucket, "bucket", "bucketMultiSelect (Blanchard et al.): kernel-density buckets by linear projection",
     true, true},
    {BackendId::kCuttingPlane, "cutting-plane",
     "Kelley's cutting-plane order statistics (Beliakov 2011) with copy_if and sort", true, true},
}};

/// The exact GPU selection backends CLEAN may use, `auto` (the default) first.
const std::vector<std::string>& clean_backend_names();

/// True when `name` is one of clean_backend_names().
bool is_clean_backend(std::string_view name);

/// "auto, sort, ...": the list for messages and help.
std::string clean_backend_list();

}  // namespace gpuclean::select

#pragma once
// `gpuclean bench select`: times every selection backend on the same data, with CUB's radix
// sort (backend "sort") as the baseline in the same run, and checks every result outside the
// timed region. `auto` is timed like the others, with the backend it chose.

#include <cstddef>
#include <string>
#include <vector>

namespace gpuclean::app {

struct BenchSelectOptions {
  std::vector<int> log2_sizes = {20, 21, 22, 23, 24, 25, 26, 27, 28, 29};  ///< 2^29 where memory allows
  std::vector<std::string> distributions;   ///< empty: all
  std::vector<std::string> backends;        ///< empty: every registered GPU backend
  std::vector<std::string> ks = {"1", "1024", "65536", "n/100"};
  bool order_statistics = true;             ///< also the median and the 101 percentiles
  int repeats = 10;
  std::string format = "table";             ///< table, csv or json
  std::string output;                       ///< file for csv/json (stdout when empty)
  bool check_cpu = true;                    ///< also check against the CPU reference up to 2^24
  bool robust = true;                       ///< also robust_statistics (with the order statistics)
  /// Also print, per size, operation, k and data class, the fastest backend and the auto
  /// backend's time and choices: what select/backends/auto_rule.hpp is derived from.
  bool auto_table = false;
};

/// Runs the benchmark; returns the number of results that disagreed with the reference.
int run_bench_select(const BenchSelectOptions& options);

}  // namespace gpuclean::app

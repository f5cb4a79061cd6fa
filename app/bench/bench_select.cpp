#include "app/bench/bench_select.hpp"
#include "app/errors.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/value_distributions.hpp"
#include "select/backends/auto_select.hpp"
#include "select/cpu_reference.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/cuda/device_info.hpp"
#include "select/registry.hpp"

namespace gpuclean::app {
namespace {

constexpr double kPeakBandwidth = 3.08e12;  // read-only streaming on the H100 (bytes/s)

struct Row {
  std::size_t n = 0;
  std::string distribution, backend, operation;  // top-k / median / percentiles / robust
  std::size_t k = 0;
  double median_ms = 0, min_ms = 0;
  int retries = 0, passes = 0;
  std::size_t scratch_bytes = 0;
  std::string check;       // ok / MISMATCH / reference / out-of-memory
  std::string data_class;  // what auto's look sees in this distribution (select::DataClass)
  std::string choice;      // auto: the backend it forwarded to
};

select::AutoOperation auto_operation(const std::string& op) {
  if (op == "top-k") return select::AutoOperation::kTopK;
  if (op == "median") return select::AutoOperation::kOrderStatistic;
  if (op == "robust") return select::AutoOperation::kRobustStatistics;
  return select::AutoOperation::kOrderStatistics;
}

std::string backend_label(const Row& r) { return r.choice.empty() ? r.backend : r.backend + ">" + r.choice; }

int log2_of(std::size_t n) { return static_cast<int>(std::lround(std::log2(static_cast<double>(n)))); }

class Timer {
 public:
  Timer() {
    GPUCLEAN_CUDA_TRY(cudaEventCreate(&a_));
    GPUCLEAN_CUDA_TRY(cudaEventCreate(&b_));
  }
  ~Timer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  template <class F>
  std::vector<double> time(int repeats, F&& f) {
    f();  // warm-up: workspace growth, first-launch costs
    std::vector<double> ms;
    for (int r = 0; r < repeats; ++r) {
      GPUCLEAN_CUDA_TRY(cudaEventRecord(a_, nullptr));
      f();
      GPUCLEAN_CUDA_TRY(cudaEventRecord(b_, nullptr));
      GPUCLEAN_CUDA_TRY(cudaEventSynchronize(b_));
      float t = 0;
      GPUCLEAN_CUDA_TRY(cudaEventElapsedTime(&t, a_, b_));
      ms.push_back(t);
    }
    return ms;
  }

 private:
  cudaEvent_t a_, b_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

std::size_t parse_k(const std::string& s, std::size_t n) {
  if (s == "n/100") return n / 100;
  return std::stoull(s);
}

std::vector<std::uint32_t> sorted_indices(const cuda::DeviceBuffer<std::uint32_t>& d, std::size_t count) {
  std::vector<std::uint32_t> h(count);
  if (count) GPUCLEAN_CUDA_TRY(cudaMemcpy(h.data(), d.data(), count * 4, cudaMemcpyDeviceToHost));
  std::sort(h.begin(), h.end());
  return h;
}

// clean::robust_sigma's two order statistics of the finite values, as robust_statistics returns them.
select::RobustStats robust_cpu(const std::vector<float>& h) {
  select::RobustStats r;
  std::vector<float> finite;
  for (float v : h)
    if (std::isfinite(v)) finite.push_back(v);
  r.n_finite = finite.size();
  if (finite.empty()) return r;
  const std::size_t mid = (finite.size() - 1) / 2;
  r.median = select::order_statistic_cpu(finite, mid);
  for (float& v : finite) v = std::abs(v - r.median);
  r.mad = select::order_statistic_cpu(finite, mid);
  return r;
}

bool same_values(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

void print_table(const std::vector<Row>& rows, std::ostream& os) {
  char line[320];
  std::snprintf(line, sizeof line, "%-6s %-26s %-18s %-11s %9s %10s %9s %7s %7s %12s %s\n", "log2n", "distribution",
                "backend", "operation", "k", "median ms", "GB/s", "%peak", "retries", "scratch MB", "check");
  os << line;
  for (const Row& r : rows) {
    const double gbs = static_cast<double>(r.n) * 4.0 / (r.median_ms * 1e-3) / 1e9;
    std::snprintf(line, sizeof line, "%-6d %-26s %-18s %-11s %9zu %10.4f %9.1f %6.1f%% %7d %12.2f %s\n",
                  log2_of(r.n), r.distribution.c_str(), backend_label(r).c_str(), r.operation.c_str(), r.k, r.median_ms, gbs, 100.0 * gbs * 1e9 / kPeakBandwidth,
                  r.retries, static_cast<double>(r.scratch_bytes) / 1048576.0, r.check.c_str());
    os << line;
  }
}

// Per (size, operation, k, data class): every backend's total over the class's distributions,
// the fastest, and auto's total and choices. A backend missing a distribution (out of memory)
// is left out of that group. The rule in select/backends/auto_rule.hpp reads off this table.
void print_auto_table(const std::vector<Row>& rows, std::ostream& os) {
  struct Group {
    std::set<std::string> distributions;
    std::map<std::string, double> total_ms;
    std::map<std::string, int> runs;
    std::map<std::string, int> chose;
  };
  std::map<std::tuple<std::size_t, std::string, std::size_t, std::string>, Group> groups;
  for (const Row& r : rows) {
    if (r.check != "ok" && r.check != "reference") continue;
    Group& g = groups[{r.n, r.operation, r.k, r.data_class}];
    g.distributions.insert(r.distribution);
    g.total_ms[r.backend] += r.median_ms;
    ++g.runs[r.backend];
    if (!r.choice.empty()) ++g.chose[r.choice];
  }
  os << "\nauto table: per size, operation, k and data class, the summed median times over the class's "
        "distributions\n";
  char line[400];
  std::snprintf(line, sizeof line, "%-6s %-11s %9s %-11s %5s %-14s %10s %-14s %10s %10s %9s  %s\n", "log2n",
                "operation", "k", "class", "dists", "best", "best ms", "runner-up", "next ms", "auto ms", "auto/best",
                "auto chose");
  os << line;
  for (const auto& [key, g] : groups) {
    const auto& [n, op, k, data_class] = key;
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [b, ms] : g.total_ms)
      if (b != "auto" && g.runs.at(b) == static_cast<int>(g.distributions.size())) ranked.push_back({ms, b});
    std::sort(ranked.begin(), ranked.end());
    if (ranked.empty()) continue;
    const double auto_ms = g.total_ms.count("auto") ? g.total_ms.at("auto") : 0.0;
    std::string chose;
    for (const auto& [b, c] : g.chose) chose += (chose.empty() ? "" : ", ") + b + " x" + std::to_string(c);
    std::snprintf(line, sizeof line, "%-6d %-11s %9zu %-11s %5zu %-14s %10.4f %-14s %10.4f %10.4f %9.2f  %s\n",
                  log2_of(n), op.c_str(), k, data_class.c_str(), g.distributions.size(), ranked[0].second.c_str(),
                  ranked[0].first, ranked.size() > 1 ? ranked[1].second.c_str() : "-",
                  ranked.size() > 1 ? ranked[1].first : 0.0, auto_ms, auto_ms > 0 ? auto_ms / ranked[0].first : 0.0,
                  chose.c_str());
    os << line;
  }
}

}  // namespace

int run_bench_select(const BenchSelectOptions& o) {
  if (!cuda::has_usable_device()) {
    throw RuntimeFailure("bench select needs a usable CUDA GPU (" + cuda::describe_device() + "); run it on a GPU machine.");
  }
  const select::Registry& reg = select::builtin_registry();
  std::vector<std::string> backends = o.backends;
  if (backends.empty())
    for (const auto& name : reg.names())
      if (name != "cpu" && reg.make(name)->exact()) backends.push_back(name);
  if (std::find(backends.begin(), backends.end(), "sort") == backends.end()) backends.insert(backends.begin(), "sort");
  if (o.auto_table && std::find(backends.begin(), backends.end(), "auto") == backends.end()) backends.push_back("auto");
  std::vector<std::string> dists = o.distributions;
  if (dists.empty())
    for (const auto& d : data::value_distributions()) dists.push_back(d.name);

  std::cerr << "bench select on " << cuda::describe_device() << "; times are medians of " << o.repeats
            << " runs after a warm-up, GB/s of input read, %peak against 3.08 TB/s\n";
  std::vector<Row> rows;
  int mismatches = 0;
  Timer timer;
  for (int lg : o.log2_sizes) {
    const std::size_t n = std::size_t{1} << lg;
    std::vector<float> h(n);
    cuda::DeviceBuffer<float> d(n, nullptr);
    std::size_t kmax = 0;
    for (const auto& ks : o.ks) kmax = std::max(kmax, parse_k(ks, n));
    cuda::DeviceBuffer<float> out_v(std::max<std::size_t>(kmax, 1), nullptr);
    cuda::DeviceBuffer<std::uint32_t> out_i(std::max<std::size_t>(kmax, 1), nullptr);
    std::map<std::string, std::unique_ptr<select::Selector>> sel;
    std::map<std::string, std::unique_ptr<select::Workspace>> ws;
    for (const auto& b : backends) {
      sel[b] = reg.make(b);
      ws[b] = std::make_unique<select::Workspace>();
    }
    for (const std::string& dist : dists) {
      data::value_distribution(dist).fill(h, 0xBE7C4 + static_cast<std::uint64_t>(lg));
      GPUCLEAN_CUDA_TRY(cudaMemcpy(d.data(), h.data(), n * 4, cudaMemcpyHostToDevice));
      std::size_t valid = 0;
      for (float v : h) valid += !std::isnan(v);
      // What auto's look sees (taken here at every size, for the table; auto itself looks only
      // where its rule says).
      select::Workspace look;
      const std::string class_abs(
          select::to_string(select::sample_data_class(nullptr, d.data(), n, select::Order::kLargestAbs, look)));
      const std::string class_asc(
          select::to_string(select::sample_data_class(nullptr, d.data(), n, select::Order::kSmallest, look)));
      for (const std::string& ks : o.ks) {
        const std::size_t k = parse_k(ks, n);
        const select::SelectRequest req{k, select::Order::kLargestAbs, false};
        std::vector<std::uint32_t> reference;
        for (const std::string& b : backends) {
          // Sort is often out of memory at the largest sizes; that is part of the result.
          Row r;
          r.n = n;
          r.distribution = dist;
          r.backend = b;
          r.operation = "top-k";
          r.k = k;
          r.data_class = class_abs;
          if (b == "auto")
            r.choice = select::auto_backend_for(nullptr, d.data(), n, select::AutoOperation::kTopK, k, req.order, *ws[b]);
          select::SelectStats st;
          try {
            const auto ms = timer.time(o.repeats, [&] {
              st = sel[b]->top_k(nullptr, d.data(), n, req, *ws[b], out_v.data(), out_i.data());
            });
            r.median_ms = median(ms);
            r.min_ms = *std::min_element(ms.begin(), ms.end());
          } catch (const cuda::CudaError& e) {
            if (!e.out_of_memory()) throw;
            r.check = "out-of-memory";
            rows.push_back(r);
            continue;
          }
          r.retries = st.retries;
          r.passes = st.passes;
          r.scratch_bytes = st.scratch_bytes;
          const auto got = sorted_indices(out_i, st.count);
          if (reference.empty() && o.check_cpu && lg <= 24) {
            reference = select::top_k_cpu(h, req).indices;
            std::sort(reference.begin(), reference.end());
          }
          if (reference.empty()) {
            // No CPU reference at this size: the first backend that ran (sort, unless it ran out
            // of memory) is the reference for the others.
            reference = got;
            r.check = "reference";
          } else {
            r.check = got == reference ? "ok" : "MISMATCH";
          }
          if (r.check == "MISMATCH") ++mismatches;
          rows.push_back(r);
          std::cerr << "." << std::flush;
        }
      }
      std::vector<std::size_t> median_rank = {valid ? (valid - 1) / 2 : 0};
      std::vector<std::size_t> percentiles;
      for (int q = 0; q <= 100; ++q) percentiles.push_back(static_cast<std::size_t>(q / 100.0 * static_cast<double>(valid ? valid - 1 : 0)));
      for (const auto& [op, ranks] : {std::pair{std::string("median"), median_rank}, std::pair{std::string("percentiles"), percentiles}}) {
        if (!o.order_statistics) break;  // robust_statistics below has its own flag
        std::vector<float> reference;
        for (const std::string& b : backends) {
          Row r;
          r.n = n;
          r.distribution = dist;
          r.backend = b;
          r.operation = op;
          r.k = ranks.size();
          r.data_class = class_asc;
          if (b == "auto")
            r.choice = select::auto_backend_for(nullptr, d.data(), n, auto_operation(op), ranks.size(),
                                                select::Order::kSmallest, *ws[b]);
          std::vector<float> got(ranks.size());
          select::SelectStats st;
          try {
            const auto ms = timer.time(o.repeats, [&] { st = sel[b]->order_statistics(nullptr, d.data(), n, ranks, *ws[b], got.data()); });
            r.median_ms = median(ms);
          } catch (const cuda::CudaError& e) {
            if (!e.out_of_memory()) throw;
            r.check = "out-of-memory";
            rows.push_back(r);
            continue;
          }
          r.retries = st.retries;
          r.passes = st.passes;
          r.scratch_bytes = st.scratch_bytes;
          if (reference.empty()) reference = o.check_cpu && lg <= 24 ? select::multiselect_cpu(h, ranks) : got;
          r.check = same_values(got, reference) ? "ok" : "MISMATCH";
          if (r.check == "MISMATCH") ++mismatches;
          rows.push_back(r);
          std::cerr << "." << std::flush;
        }
      }
      if (!o.robust) continue;
      std::optional<select::RobustStats> robust_reference;
      for (const std::string& b : backends) {
        Row r;
        r.n = n;
        r.distribution = dist;
        r.backend = b;
        r.operation = "robust";
        r.k = 1;
        r.data_class = class_asc;
        if (b == "auto")
          r.choice = select::auto_backend_for(nullptr, d.data(), n, select::AutoOperation::kRobustStatistics, 1,
                                              select::Order::kSmallest, *ws[b]);
        select::RobustStats got;
        select::SelectStats st;
        try {
          const auto ms = timer.time(o.repeats, [&] { got = sel[b]->robust_statistics(nullptr, d.data(), n, *ws[b], &st); });
          r.median_ms = median(ms);
          r.min_ms = *std::min_element(ms.begin(), ms.end());
        } catch (const cuda::CudaError& e) {
          if (!e.out_of_memory()) throw;
          r.check = "out-of-memory";
          rows.push_back(r);
          continue;
        }
        r.retries = st.retries;
        r.passes = st.passes;
        r.scratch_bytes = st.scratch_bytes;
        if (!robust_reference) robust_reference = o.check_cpu && lg <= 24 ? robust_cpu(h) : got;
        r.check = got.n_finite == robust_reference->n_finite &&
                          same_values({got.median, got.mad}, {robust_reference->median, robust_reference->mad})
                      ? "ok"
                      : "MISMATCH";
        if (r.check == "MISMATCH") ++mismatches;
        rows.push_back(r);
        std::cerr << "." << std::flush;
      }
    }
  }
  std::cerr << "\n";

  std::ostringstream out;
  if (o.format == "csv") {
    out << "n,distribution,backend,operation,k,median_ms,min_ms,gb_per_s,retries,passes,scratch_bytes,check,data_class,"
           "choice\n";
    for (const Row& r : rows)
      out << r.n << ',' << r.distribution << ',' << r.backend << ',' << r.operation << ',' << r.k << ',' << r.median_ms
          << ',' << r.min_ms << ',' << static_cast<double>(r.n) * 4.0 / (r.median_ms * 1e-3) / 1e9 << ',' << r.retries
          << ',' << r.passes << ',' << r.scratch_bytes << ',' << r.check << ',' << r.data_class << ',' << r.choice
          << '\n';
  } else if (o.format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const Row& r : rows)
      j.push_back({{"n", r.n}, {"distribution", r.distribution}, {"backend", r.backend}, {"operation", r.operation},
                   {"k", r.k}, {"median_ms", r.median_ms}, {"min_ms", r.min_ms},
                   {"gb_per_s", static_cast<double>(r.n) * 4.0 / (r.median_ms * 1e-3) / 1e9}, {"retries", r.retries},
                   {"passes", r.passes}, {"scratch_bytes", r.scratch_bytes}, {"check", r.check},
                   {"data_class", r.data_class}, {"choice", r.choice}});
    out << j.dump(1) << '\n';
  } else {
    print_table(rows, out);
    if (o.auto_table) print_auto_table(rows, out);
  }
  if (o.output.empty()) {
    std::cout << out.str();
  } else {
    std::ofstream(o.output) << out.str();
    if (o.format != "table") {
      print_table(rows, std::cout);
      if (o.auto_table) print_auto_table(rows, std::cout);
    }
  }
  if (mismatches) std::cerr << "bench select: " << mismatches << " results disagreed with the reference\n";
  return mismatches;
}

}  // namespace gpuclean::app

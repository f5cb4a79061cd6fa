#include "app/compare/select_report.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace gpuclean::app {

SelectComparisonTable::SelectComparisonTable(std::vector<clean::SelectCycleComparison> cycles)
    : cycles_(std::move(cycles)) {
  for (const auto& c : cycles_) {
    for (const auto& t : c.times) {
      bool known = false;
      for (const auto& b : backends_) known = known || b == t.backend;
      if (!known) backends_.push_back(t.backend);
    }
  }
  for (const auto& c : cycles_) {
    std::vector<double> row(backends_.size(), std::numeric_limits<double>::quiet_NaN());
    for (const auto& t : c.times) {
      for (std::size_t b = 0; b < backends_.size(); ++b)
        if (backends_[b] == t.backend) row[b] = t.seconds;
    }
    seconds_.push_back(std::move(row));
  }
}

double SelectComparisonTable::seconds(std::size_t i, std::size_t backend) const { return seconds_[i][backend]; }

double SelectComparisonTable::total_seconds(std::size_t backend) const {
  double sum = 0.0;
  for (const auto& row : seconds_)
    if (!std::isnan(row[backend])) sum += row[backend];
  return sum;
}

double SelectComparisonTable::speedup_over_sort(std::size_t backend) const {
  for (std::size_t b = 0; b < backends_.size(); ++b) {
    if (backends_[b] == "sort") {
      const double own = total_seconds(backend);
      return own > 0.0 ? total_seconds(b) / own : std::numeric_limits<double>::quiet_NaN();
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::string SelectComparisonTable::csv() const {
  std::ostringstream out;
  out << "cycle,n,k,count,backend,seconds,speedup_over_sort\n";
  std::size_t sort_column = backends_.size();
  for (std::size_t b = 0; b < backends_.size(); ++b)
    if (backends_[b] == "sort") sort_column = b;
  char line[256];
  for (std::size_t i = 0; i < cycles_.size(); ++i) {
    const auto& c = cycles_[i];
    for (std::size_t b = 0; b < backends_.size(); ++b) {
      const double s = seconds_[i][b];
      if (std::isnan(s)) continue;
      const double speedup = sort_column < backends_.size() ? seconds_[i][sort_column] / s : std::nan("");
      std::snprintf(line, sizeof line, "%zu,%zu,%zu,%zu,%s,%.9g,%.6g\n", c.cycle, c.n, c.k, c.count,
                    backends_[b].c_str(), s, speedup);
      out << line;
    }
  }
  return out.str();
}

nlohmann::json SelectComparisonTable::json() const {
  nlohmann::json j;
  j["backends"] = backends_;
  j["baseline"] = "sort";
  j["timing"] = "CUDA events around each top-k call, median of 3 after one warm-up call per backend";
  j["check"] = "every backend returned the same set of pixels as the backend CLEAN uses";
  nlohmann::json cycles = nlohmann::json::array();
  for (std::size_t i = 0; i < cycles_.size(); ++i) {
    nlohmann::json secs = nlohmann::json::object();
    for (std::size_t b = 0; b < backends_.size(); ++b)
      if (!std::isnan(seconds_[i][b])) secs[backends_[b]] = seconds_[i][b];
    cycles.push_back({{"cycle", cycles_[i].cycle},
                      {"n", cycles_[i].n},
                      {"k", cycles_[i].k},
                      {"count", cycles_[i].count},
                      {"seconds", secs}});
  }
  j["cycles"] = cycles;
  nlohmann::json totals = nlohmann::json::object(), speedups = nlohmann::json::object();
  for (std::size_t b = 0; b < backends_.size(); ++b) {
    totals[backends_[b]] = total_seconds(b);
    const double s = speedup_over_sort(b);
    speedups[backends_[b]] = std::isnan(s) ? nlohmann::json(nullptr) : nlohmann::json(s);
  }
  j["total_seconds"] = totals;
  j["speedup_over_sort"] = speedups;
  return j;
}

void SelectComparisonTable::print(std::FILE* out) const {
  std::fprintf(out, "selection backends per major cycle [ms] (same residual and k; every set identical)\n");
  std::fprintf(out, "%6s %10s %7s", "cycle", "n", "k");
  for (const auto& b : backends_) std::fprintf(out, " %13s", b.c_str());
  std::fputc('\n', out);
  for (std::size_t i = 0; i < cycles_.size(); ++i) {
    std::fprintf(out, "%6zu %10zu %7zu", cycles_[i].cycle, cycles_[i].n, cycles_[i].count);
    for (std::size_t b = 0; b < backends_.size(); ++b) std::fprintf(out, " %13.4f", seconds_[i][b] * 1e3);
    std::fputc('\n', out);
  }
  std::fprintf(out, "%25s", "total");
  for (std::size_t b = 0; b < backends_.size(); ++b) std::fprintf(out, " %13.4f", total_seconds(b) * 1e3);
  std::fprintf(out, "\n%25s", "speed-up over sort");
  for (std::size_t b = 0; b < backends_.size(); ++b) std::fprintf(out, " %12.2fx", speedup_over_sort(b));
  std::fputc('\n', out);
}

}  // namespace gpuclean::app

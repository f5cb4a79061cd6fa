#pragma once
// --compare-select's chart: milliseconds per major cycle for each backend on a log axis, with
// each backend's speed-up over `sort` in the legend. Drawn with libgd (Debian's libgd3), whose
// built-in bitmap fonts need no font files on the machine that runs it.

#include <string>

#include "app/compare/select_report.hpp"

namespace gpuclean::app {

/// The chart as PNG bytes.
std::string select_chart_png(const SelectComparisonTable& table, const std::string& title);

/// Writes the chart to `path` (atomically; refuses to replace a file unless `overwrite`).
void write_select_chart(const std::string& path, const SelectComparisonTable& table, const std::string& title,
                        bool overwrite);

}  // namespace gpuclean::app

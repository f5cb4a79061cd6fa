// `gpuclean bench gridder`: bad values are refused before any work, a machine without a GPU is
// told so in one line unless --cpu asks for the CPU reference alone, and a small run prints one
// row per channel and operation (with a GPU, the GPU's difference from the CPU in the last column).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "select/cuda/device_info.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

using gpuclean::test::TempDir;

namespace {

// The table rows of stdout whose third cell is `op`, split into trimmed cells.
std::vector<std::vector<std::string>> rows_of(const std::string& out, const std::string& op) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::size_t begin = 1;
    for (std::size_t bar; (bar = line.find(" | ", begin)) != std::string::npos; begin = bar + 2)
      cells.push_back(line.substr(begin + 1, bar - begin - 1));
    cells.push_back(line.substr(begin + 1, line.size() - begin - 3));
    if (cells.size() > 2 && cells[2] == op) rows.push_back(cells);
  }
  return rows;
}

double count(std::string cell) {
  cell.erase(std::remove(cell.begin(), cell.end(), ','), cell.end());
  return std::stod(cell);
}

}  // namespace

TEST(BenchGridderCli, BadValuesAreRefusedInOneLine) {
  TempDir tmp;
  for (const char* args : {"--case Z", "--epsilon 0.5", "--cpu --no-cpu", "--rows -5", "--size 8"}) {
    const auto r = gpuclean::test::run_gpuclean(tmp, std::string("bench gridder ") + args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(BenchGridderCli, WithoutAGpuItSaysSoUnlessCpuIsAsked) {
  if (gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "a GPU is present";
  TempDir tmp;
  const auto r = gpuclean::test::run_gpuclean(tmp, "bench gridder --size 64 --rows 2016");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("needs a usable CUDA GPU"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(BenchGridderCli, SmallRunPrintsEveryChannelAndTheGpuMatchesTheCpu) {
  TempDir tmp;
  const auto r =
      gpuclean::test::run_gpuclean(tmp, "bench gridder --size 128 --rows 4032 --channels 2 --repeat 1 --cpu");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("unit weights, 10% flagged"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4,032 rows (2 integrations × 2,016 baselines over 4 h"), std::string::npos) << r.out;
  const auto cpu_invert = rows_of(r.out, "CPU dirty+PSF"), cpu_predict = rows_of(r.out, "CPU predict");
  ASSERT_EQ(cpu_invert.size(), 2u) << r.out;
  ASSERT_EQ(cpu_predict.size(), 2u) << r.out;
  // About a tenth of the 4,032 samples of a channel are flagged and not gridded; the degridder predicts all.
  const double gridded = count(cpu_invert[0][3]);
  EXPECT_GT(gridded, 0.85 * 4032);
  EXPECT_LT(gridded, 0.95 * 4032);
  EXPECT_EQ(cpu_predict[0][3], "4,032");
  if (!gpuclean::cuda::has_usable_device()) return;
  for (const char* op : {"GPU dirty", "GPU predict"}) {
    const auto gpu = rows_of(r.out, op);
    ASSERT_EQ(gpu.size(), 2u) << op << "\n" << r.out;
    for (const auto& row : gpu) {
      EXPECT_LT(std::stod(row.back()), 1e-4) << op << ": " << row.back();
      EXPECT_GT(std::stod(row.back()), 0.0) << op << ": the check compared a result with itself";
    }
  }
  const auto both = rows_of(r.out, "GPU dirty+PSF");
  ASSERT_EQ(both.size(), 2u) << r.out;
  EXPECT_EQ(both[0].back().rfind("dirty ", 0), 0u) << both[0].back();
}

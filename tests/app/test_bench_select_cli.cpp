// `gpuclean bench select --auto-table`: every result checked, auto timed with its choice, and the
// table the auto rule is derived from; a k above a size is refused before any work, GPU or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "select/cuda/device_info.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

using gpuclean::test::TempDir;

TEST(BenchSelectCli, AutoTableNamesTheFastestBackendAndAutosChoice) {
  if (!gpuclean::cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device";
  TempDir tmp;
  const auto r = gpuclean::test::run_gpuclean(
      tmp, "bench select --sizes 15,17 --distributions normal,narrow --ks 1,1024 --repeats 1 --auto-table "
           "--format csv --output " + tmp.file("b.csv"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("auto table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("auto>randomized"), std::string::npos) << r.out;  // below the look size
  for (const char* op : {"top-k", "median", "percentiles", "robust"}) EXPECT_NE(r.out.find(op), std::string::npos) << op;
  const std::string csv = gpuclean::test::slurp(tmp.file("b.csv"));
  EXPECT_EQ(csv.rfind("n,distribution,backend,operation,k,median_ms,min_ms,gb_per_s,retries,passes,scratch_bytes,check,"
                      "data_class,choice\n", 0), 0u) << csv.substr(0, 200);
  EXPECT_EQ(csv.find("MISMATCH"), std::string::npos);
  EXPECT_NE(csv.find(",narrow,auto,top-k,1024,"), std::string::npos);
  EXPECT_NE(csv.find(",repeated,"), std::string::npos);    // narrow
  EXPECT_NE(csv.find(",continuous,"), std::string::npos);  // normal
}

TEST(BenchSelectCli, KAboveASizeIsRefusedBeforeAnyWork) {
  TempDir tmp;
  auto r = gpuclean::test::run_gpuclean(tmp, "bench select --sizes 10,12 --ks 1,2000 --repeats 1");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--ks 2000 is more than the 1024 elements of --sizes 10"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // k = n is a valid request: no refusal (without a GPU the run stops on that instead).
  r = gpuclean::test::run_gpuclean(tmp, "bench select --sizes 10 --ks 1024 --repeats 1 --no-order-statistics");
  EXPECT_EQ(r.err.find("--ks"), std::string::npos) << r.err;
  if (gpuclean::cuda::has_usable_device()) {
    EXPECT_EQ(r.code, 0) << r.out << r.err;
  }
}

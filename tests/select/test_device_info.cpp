#include <gtest/gtest.h>

#include "select/cuda/device_info.hpp"
#include "tests/support/gpu_test.hpp"

namespace gc = gpuclean::cuda;

TEST(DeviceInfo, AnswersWithoutAGpu) {
  // Must not throw or abort on machines without a GPU or driver.
  const int n = gc::device_count();
  EXPECT_GE(n, 0);
  if (n == 0) {
    EXPECT_FALSE(gc::has_usable_device());
    EXPECT_EQ(gc::device_memory().total_bytes, 0u);
  }
  EXPECT_FALSE(gc::describe_device().empty());
}

class DeviceInfoGpu : public gpuclean::test::GpuTest {};

TEST_F(DeviceInfoGpu, DescribesTheDevice) {
  EXPECT_TRUE(gc::built_with_cuda());
  EXPECT_GE(gc::device_count(), 1);
  EXPECT_NE(gc::describe_device().find("sm_"), std::string::npos) << gc::describe_device();
  const auto mem = gc::device_memory();
  EXPECT_GT(mem.total_bytes, 0u);
  EXPECT_LE(mem.free_bytes, mem.total_bytes);
}

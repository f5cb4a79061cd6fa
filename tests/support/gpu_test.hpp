#pragma once
#include <gtest/gtest.h>

#include "select/cuda/device_info.hpp"

namespace gpuclean::test {

/// Base fixture for GPU tests: skips (not passes) when no usable CUDA device is present.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << cuda::describe_device();
  }
};

}  // namespace gpuclean::test

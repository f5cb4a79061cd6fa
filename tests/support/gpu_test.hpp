#pragma once
#include <gtest/gtest.h>

#include "clean/clean_settings.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::test {

/// Base fixture for GPU tests: skips (not passes) when no usable CUDA device is present.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::has_usable_device()) GTEST_SKIP() << "no usable CUDA device: " << cuda::describe_device();
  }
};

/// Base fixture for tests run on each device (the parameter): the GPU case skips without a GPU.
class DeviceTest : public ::testing::TestWithParam<clean::Device> {
 protected:
  void SetUp() override {
    if (GetParam() == clean::Device::kGpu && !cuda::has_usable_device())
      GTEST_SKIP() << "no usable CUDA device: " << cuda::describe_device();
  }
};

}  // namespace gpuclean::test

#pragma once
// The GPUs of `gpuclean image` (-max-gpus N, multi-gpu-plan.md §2.4): the first N visible ones
// (0: all), as `gpuclean clean --max-gpus`. GPUCLEAN_TEST_IMAGE_GPUS ("0,0") names the list
// instead, so the tests run the several-GPU code on one GPU (two lanes on device 0).
#include <cstddef>
#include <string>
#include <vector>

namespace gpuclean::app {

/// The device list: `test_list` when not empty (each a device < visible, else
/// clean::InvalidSettings naming it), else 0 ..< min(max_gpus, visible) (all with max_gpus 0).
std::vector<int> image_gpus(std::size_t max_gpus, int visible, const std::string& test_list);

/// "0,1,2" for the log and the summary.
std::string gpu_list_text(const std::vector<int>& gpus);

}  // namespace gpuclean::app

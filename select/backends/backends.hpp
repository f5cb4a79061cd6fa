#pragma once
// Factories of the built-in backends (one .cu file each).
#include <memory>

#include "select/selector.hpp"

namespace gpuclean::select {

std::unique_ptr<Selector> make_cpu_selector();
std::unique_ptr<Selector> make_sort_selector();
std::unique_ptr<Selector> make_randomized_selector();
std::unique_ptr<Selector> make_sample_selector();
std::unique_ptr<Selector> make_sample_approx_selector();
std::unique_ptr<Selector> make_bucket_selector();
std::unique_ptr<Selector> make_cutting_plane_selector();

}  // namespace gpuclean::select

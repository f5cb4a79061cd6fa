#pragma once
// A toy algorithm for the driver's tests (toy_steps.cpp): CLEAN with a delta-function PSF, so a
// component changes only its own pixel. Its row is not in the factory's table: it runs through
// make_deconvolver(row, Device::kCpu) as a registered algorithm does.

#include "clean/algorithm_row.hpp"

namespace gpuclean::test {

const clean::AlgorithmRow& delta_psf_row();

}  // namespace gpuclean::test

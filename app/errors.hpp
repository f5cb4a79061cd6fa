#pragma once
#include <stdexcept>

namespace gpuclean::app {

/// The run cannot proceed on this machine (no GPU, out of device memory, ...): exit code 4.
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpuclean::app

#pragma once
#include <stdexcept>
#include <string>

namespace gpuclean::clean {

/// Settings that make no sense (a usage error). The message says what to change.
class InvalidSettings : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Input data that cannot be cleaned (NaN PSF, sizes that do not fit, ...).
class InvalidInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The GPU cannot hold the run (checked before any work). The message gives the sizes.
class InsufficientGpuMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The host cannot hold the run's data (checked before any is read). The message gives the sizes.
class InsufficientHostMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// --device gpu on a machine with no usable GPU. The message says what there is instead.
class GpuUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Two selection backends returned different sets for the same request (--compare-select): a
/// defect in the selection library. The message names the cycle and the backends.
class SelectMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpuclean::clean

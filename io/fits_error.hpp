#pragma once
#include <stdexcept>
#include <string>

namespace gpuclean::io {

/// A FITS problem, in a sentence a user can act on. `kind` tells the CLI which exit code to use.
class FitsError : public std::runtime_error {
 public:
  enum class Kind {
    kInput,   ///< an input file is missing, not FITS, or has an unsupported shape
    kOutput,  ///< an output cannot be written
    kExists,  ///< an output exists and --overwrite was not given, or would replace an input
  };
  FitsError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

}  // namespace gpuclean::io

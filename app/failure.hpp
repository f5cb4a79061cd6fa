#pragma once
// Every way a run can fail, as one line and an exit code: shared by the single command (which
// exits with it) and batch mode (which records it per observation and goes on).

#include <exception>
#include <string>

#include "app/exit_codes.hpp"

namespace gpuclean::app {

struct Failure {
  ExitCode code = ExitCode::kInternal;
  std::string message;  ///< one line: what is wrong and how to fix it
};

/// Classifies the exception in flight (call it from a catch block) or `e`.
Failure classify(std::exception_ptr e);

}  // namespace gpuclean::app

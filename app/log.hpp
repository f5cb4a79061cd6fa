#pragma once
// Progress output: to stdout, or to stderr when stdout carries the JSON summary.

#include <cstdarg>
#include <cstdio>

#include "app/run_options.hpp"

namespace gpuclean::app {

class Log {
 public:
  Log(Verbosity v, bool stdout_taken) : v_(v), out_(stdout_taken ? stderr : stdout) {}
  void info(const char* fmt, ...) const __attribute__((format(printf, 2, 3))) {
    if (v_ == Verbosity::kQuiet) return;
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(out_, fmt, ap);
    va_end(ap);
    std::fputc('\n', out_);
    std::fflush(out_);
  }
  void verbose(const char* fmt, ...) const __attribute__((format(printf, 2, 3))) {
    if (v_ != Verbosity::kVerbose) return;
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(out_, fmt, ap);
    va_end(ap);
    std::fputc('\n', out_);
    std::fflush(out_);
  }
  /// Warnings are shown unless -q.
  void warn(const char* fmt, ...) const __attribute__((format(printf, 2, 3))) {
    if (v_ == Verbosity::kQuiet) return;
    std::fputs("gpuclean: warning: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
  }

 private:
  Verbosity v_;
  std::FILE* out_;
};

}  // namespace gpuclean::app

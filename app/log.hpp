#pragma once
// Progress output: to stdout, or to stderr when stdout carries the JSON summary.

#include <cstdarg>
#include <cstdio>
#include <string>

#include "app/run_options.hpp"

namespace gpuclean::app {

class Log {
 public:
  Log(Verbosity v, bool stdout_taken) : v_(v), out_(stdout_taken ? stderr : stdout) {}
  /// Batch mode: warnings name the observation they are about.
  Log(Verbosity v, bool stdout_taken, std::string warn_prefix)
      : v_(v), out_(stdout_taken ? stderr : stdout), warn_prefix_(std::move(warn_prefix)) {}
  Verbosity verbosity() const { return v_; }
  void info(const char* fmt, ...) const __attribute__((format(printf, 2, 3))) {
    va_list ap;
    va_start(ap, fmt);
    print(shows_info(), out_, "", fmt, ap);
    va_end(ap);
  }
  bool shows_info() const { return v_ == Verbosity::kNormal || v_ == Verbosity::kVerbose; }
  void verbose(const char* fmt, ...) const __attribute__((format(printf, 2, 3))) {
    va_list ap;
    va_start(ap, fmt);
    print(v_ == Verbosity::kVerbose, out_, "", fmt, ap);
    va_end(ap);
  }
  /// Warnings go to stderr unless -q.
  void warn(const char* fmt, ...) const __attribute__((format(printf, 2, 3))) {
    va_list ap;
    va_start(ap, fmt);
    print(v_ != Verbosity::kQuiet, stderr, ("gpuclean: warning: " + warn_prefix_).c_str(), fmt, ap);
    va_end(ap);
  }

 private:
  static void print(bool show, std::FILE* to, const char* prefix, const char* fmt, va_list ap) {
    if (!show) return;
    std::fputs(prefix, to);
    std::vfprintf(to, fmt, ap);
    std::fputc('\n', to);
    std::fflush(to);
  }
  Verbosity v_;
  std::FILE* out_;
  std::string warn_prefix_;
};

}  // namespace gpuclean::app

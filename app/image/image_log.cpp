#include "app/image/image_log.hpp"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace gpuclean::app::image_log {
namespace {

Verbosity g_verbosity = Verbosity::kNormal;
bool g_log_time = false;
std::mutex g_mutex;

void print(const char* fmt, va_list ap) {
  char buffer[4096];
  std::vsnprintf(buffer, sizeof buffer, fmt, ap);
  std::string line = buffer;
  if (line.empty() || line.back() != '\n') line += '\n';
  std::string prefix;
  if (g_log_time) {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm local{};
    localtime_r(&t, &local);
    char stamp[64];
    const std::size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
    std::snprintf(stamp + n, sizeof stamp - n, ".%03lld ", static_cast<long long>(ms));
    prefix = stamp;
  }
  const std::lock_guard<std::mutex> lock(g_mutex);
  // Each line of a multi-line message gets the time.
  for (std::size_t start = 0; start < line.size();) {
    const std::size_t end = line.find('\n', start);
    std::fputs(prefix.c_str(), stdout);
    std::fwrite(line.data() + start, 1, end - start + 1, stdout);
    start = end + 1;
  }
  std::fflush(stdout);
}

}  // namespace

void configure(Verbosity verbosity, bool log_time) {
  g_verbosity = verbosity;
  g_log_time = log_time;
}

void info(const char* fmt, ...) {
  if (g_verbosity == Verbosity::kQuiet || g_verbosity == Verbosity::kWarnings) return;
  va_list ap;
  va_start(ap, fmt);
  print(fmt, ap);
  va_end(ap);
}

void verbose(const char* fmt, ...) {
  if (g_verbosity != Verbosity::kVerbose) return;
  va_list ap;
  va_start(ap, fmt);
  print(fmt, ap);
  va_end(ap);
}

}  // namespace gpuclean::app::image_log

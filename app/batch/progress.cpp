#include "app/batch/progress.hpp"

#include <cmath>
#include <string>

namespace gpuclean::app {

Progress::Progress(std::size_t total, bool bar, Verbosity verbosity, std::FILE* out)
    : total_(total), bar_(bar), verbosity_(verbosity), out_(out), start_(std::chrono::steady_clock::now()) {
  if (bar_ && verbosity_ != Verbosity::kQuiet) draw();
}

std::string Progress::clock(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

std::string Progress::bar_line() const {
  constexpr int kWidth = 30;
  const std::size_t finished = done_ + failed_ + skipped_;
  const int filled = total_ ? static_cast<int>(kWidth * finished / total_) : kWidth;
  std::string line = "[" + std::string(filled, '#') + std::string(kWidth - filled, '-') + "]";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::size_t worked = done_ + failed_;  // skipped ones cost nothing: they do not set the rate
  const double rate = elapsed > 0 && worked ? worked / elapsed : 0.0;
  const double eta = rate > 0 ? (total_ - finished) / rate : NAN;
  char tail[160];
  std::snprintf(tail, sizeof tail, " %zu/%zu", finished, total_);
  line += tail;
  if (failed_) line += "  " + std::to_string(failed_) + " failed";
  if (skipped_) line += "  " + std::to_string(skipped_) + " skipped";
  std::snprintf(tail, sizeof tail, "  %.2f obs/s  elapsed %s  ETA %s", rate, clock(elapsed).c_str(),
                finished == total_ ? "0:00" : clock(eta).c_str());
  return line + tail;
}

void Progress::draw() {
  std::fprintf(out_, "\r\033[K%s", bar_line().c_str());
  std::fflush(out_);
}

void Progress::record(const ObservationOutcome& o) {
  std::lock_guard<std::mutex> lock(mutex_);
  switch (o.status) {
    case OutcomeStatus::kDone: ++done_; break;
    case OutcomeStatus::kFailed: ++failed_; break;
    case OutcomeStatus::kSkipped: ++skipped_; break;
  }
  const std::size_t finished = done_ + failed_ + skipped_;
  char line[512];
  if (o.status == OutcomeStatus::kDone) {
    std::snprintf(line, sizeof line, "[%zu/%zu] %s: done on %s, %zu components, residual RMS %.4g Jy/beam, %.2f s",
                  finished, total_, o.name.c_str(), o.device.c_str(), o.iterations, o.rms_residual, o.seconds);
  } else if (o.status == OutcomeStatus::kSkipped) {
    std::snprintf(line, sizeof line, "[%zu/%zu] %s: skipped (%s)", finished, total_, o.name.c_str(), o.reason.c_str());
  } else {
    std::snprintf(line, sizeof line, "[%zu/%zu] %s: FAILED: %s", finished, total_, o.name.c_str(), o.reason.c_str());
  }
  const bool failure = o.status == OutcomeStatus::kFailed;
  if (verbosity_ == Verbosity::kQuiet && !failure) return;
  if (bar_) {
    // Only failures (and, with -v, every observation) scroll above the bar.
    if (failure || verbosity_ == Verbosity::kVerbose) std::fprintf(out_, "\r\033[K%s\n", line);
    if (verbosity_ != Verbosity::kQuiet) draw();
  } else {
    std::fprintf(failure ? stderr : out_, "%s\n", line);
  }
  std::fflush(out_);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bar_ && verbosity_ != Verbosity::kQuiet) {
    draw();
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

}  // namespace gpuclean::app

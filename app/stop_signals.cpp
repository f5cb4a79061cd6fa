#include "app/stop_signals.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "io/stage_folder.hpp"

namespace gpuclean::app {
namespace {

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

const char* name_of(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "SIGHUP";
  }
}

[[noreturn]] void wait_for_stop() {
  const sigset_t set = stop_set();
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  // A second signal during a commit: leave now; the commit record lets the next run finish it.
  std::thread([set, first = sig] {
    int again = 0;
    while (sigwait(&set, &again) != 0) {
    }
    std::fprintf(stderr, "gpuclean: stopped by %s during the commit; the next run completes it\n", name_of(again));
    std::fflush(stderr);
    ::_exit(128 + first);
  }).detach();
  const std::size_t files = io::remove_live_stages();  // waits for a commit in progress
  const std::size_t commits = io::commits_done();
  if (commits == 0)
    std::fprintf(stderr, "gpuclean: stopped by %s; removed %zu staged file(s); no output and no MeasurementSet was "
                 "changed\n", name_of(sig), files);
  else
    std::fprintf(stderr, "gpuclean: stopped by %s; %zu set(s) of outputs were committed whole (with their MODEL_DATA) "
                 "and stay; removed %zu staged file(s) not committed\n", name_of(sig), commits, files);
  std::fflush(stderr);
  ::_exit(128 + sig);
}

}  // namespace

void install_stop_signals() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(wait_for_stop).detach();
}

void finish_if_stopped() {
  if (!io::stop_requested()) return;
  for (;;) ::pause();
}

}  // namespace gpuclean::app

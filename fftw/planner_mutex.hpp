#pragma once
// FFTW's planner (plan creation and destruction, and fftwf_plan_with_nthreads) is not thread-safe:
// every part of gpuclean that plans — clean's convolutions, the imaging gridder, the simulators —
// takes this one mutex, as they may plan at once from different threads (gpuclean image predicts
// MODEL_DATA on the CPU while it restores the images). One mutex for the whole program: an inline
// function's static is shared by every translation unit.
#include <mutex>

namespace gpuclean {

inline std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace gpuclean

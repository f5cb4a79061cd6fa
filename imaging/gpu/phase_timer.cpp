#include "imaging/gpu/phase_timer.hpp"

#include "select/cuda/cuda_check.hpp"

namespace gpuclean::imaging::gpu {

PhaseTimer::PhaseTimer(cudaStream_t stream) : stream_(stream) { mark(Phase::kIdle); }

PhaseTimer::~PhaseTimer() {
  for (auto& [event, phase] : marks_) GPUCLEAN_CUDA_TRY_NO_THROW(cudaEventDestroy(event));
}

void PhaseTimer::mark(Phase phase) {
  cudaEvent_t event = nullptr;
  GPUCLEAN_CUDA_TRY(cudaEventCreate(&event));
  marks_.emplace_back(event, phase);
  GPUCLEAN_CUDA_TRY(cudaEventRecord(event, stream_));
}

void PhaseTimer::add_to(GridderTimings& t) const {
  if (marks_.size() < 2) return;
  GPUCLEAN_CUDA_TRY(cudaEventSynchronize(marks_.back().first));
  for (std::size_t i = 1; i < marks_.size(); ++i) {
    float ms = 0;
    GPUCLEAN_CUDA_TRY(cudaEventElapsedTime(&ms, marks_[i - 1].first, marks_[i].first));
    switch (marks_[i].second) {
      case Phase::kIdle: break;
      case Phase::kUpload: t.upload_ms += ms; break;
      case Phase::kPrep: t.prep_ms += ms; break;
      case Phase::kGrid: t.grid_ms += ms; break;
      case Phase::kFft: t.fft_ms += ms; break;
      case Phase::kScreen: t.screen_ms += ms; break;
      case Phase::kCorrect: t.correct_ms += ms; break;
      case Phase::kDownload: t.download_ms += ms; break;
    }
  }
}

}  // namespace gpuclean::imaging::gpu

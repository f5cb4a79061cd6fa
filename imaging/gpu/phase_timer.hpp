#pragma once
// Device time per phase of one gridder call, from CUDA events on its stream: each mark ends an
// interval, which counts for the mark's phase (kIdle: not counted, e.g. while the host sorts).

#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "imaging/gpu/gridder_gpu.hpp"

namespace gpuclean::imaging::gpu {

enum class Phase { kIdle, kUpload, kPrep, kGrid, kFft, kScreen, kCorrect, kDownload };

class PhaseTimer {
 public:
  explicit PhaseTimer(cudaStream_t stream);  // the first mark
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

  /// The stream's time since the previous mark counts as `phase` (no host wait).
  void mark(Phase phase);
  /// Adds the phases to `t`; waits for the last mark.
  void add_to(GridderTimings& t) const;

 private:
  cudaStream_t stream_;
  std::vector<std::pair<cudaEvent_t, Phase>> marks_;
};

}  // namespace gpuclean::imaging::gpu

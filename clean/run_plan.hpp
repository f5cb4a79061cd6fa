#pragma once
// How a run uses the machine, decided once for every front end: the device (--device auto picks a
// usable GPU), whether a group fits in the GPU's free memory (else the CPU for --device auto, a
// refusal for --device gpu), how many groups are cleaned at once and on which GPUs, and how many
// of a joined group's planes stay on the device (fewer stream through it each major cycle), or
// whether they are split over the GPUs.
//
// The rule: one worker may use all of a GPU's free memory; more workers are added while each
// still has a tenth of the free memory to spare (their transient allocations overlap). A joined
// group that does not fit whole is split over the GPUs when there are several and it fits so,
// else streams its planes through the device in the largest block that fits, one group at a time.

#include <cstddef>
#include <string>
#include <vector>

#include "clean/clean_settings.hpp"
#include "clean/work_table.hpp"

namespace gpuclean::clean {

/// The device asked for, resolved before any work: kCpu, or kGpu when this build has CUDA and a
/// device is usable (kAuto picks it when there is one). Throws GpuUnavailable for --device gpu
/// without a usable GPU and InvalidSettings for --device gpu in a build without CUDA. `note`, when
/// given, receives a line saying what was found (for the verbose log).
Device resolve_device(Device requested, std::string* note = nullptr);

/// What a front end asks of the machine beyond the table.
struct PlanRequest {
  /// Groups cleaned at once on one GPU at most (several fill more of a GPU when the planes are
  /// small: a plane's minor cycle is mostly one SM's chain).
  std::size_t parallel = 1;
  /// The GPUs the groups spread over (empty: the calling thread's current device).
  std::vector<int> gpus;
  /// Split a joined group over `gpus` even when it fits one (tests, benchmarks); the environment
  /// variable GPUCLEAN_SPLIT_JOINED=1 asks the same of every front end.
  bool split_joined = false;
  /// The least free memory over `gpus`, measured before the front end made anything of its own on
  /// them (a cube's workers prepared during its read hold memory that the plan counts in `need`
  /// again); 0: measured now.
  std::size_t free_bytes = 0;
};

struct RunPlan {
  Device device = Device::kCpu;
  std::size_t workers = 1;        ///< groups cleaned at once
  std::size_t device_planes = 0;  ///< joined groups on the GPU: planes on the device at once (0: all)
  std::vector<int> gpus;          ///< GPU workers: worker w runs on gpus[w % size] (empty: current device)
  std::size_t gpu_bytes = 0;      ///< GPU: the estimate of one group's device memory (split: on each GPU, at most)
  /// A joined group's planes split over these GPUs, one group at a time (JoinedPlanes::split_gpus;
  /// empty: no split).
  std::vector<int> split_gpus;
  /// --device auto could not fit the run on the GPU, which goes to the CPU: the warning to give.
  std::string fallback;
};

/// The plan for `table` (groups made) on `device` (resolve_device()'s answer). settings.device is
/// what was asked for: --device gpu that does not fit throws InsufficientGpuMemory, --device auto
/// falls back to the CPU with plan.fallback set.
RunPlan plan_run(const WorkTable& table, const CleanSettings& settings, Device device, const PlanRequest& request = {});

/// The least free memory among `gpus` (empty: the current device), as plan_run measures it.
std::size_t least_free_gpu_memory(const std::vector<int>& gpus);

}  // namespace gpuclean::clean

#include "clean/run_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "clean/errors.hpp"
#include "clean/gpu_memory.hpp"
#include "clean/plan_workers.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::clean {
namespace {

std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

RunShape group_shape(const WorkTable& t, const std::vector<std::size_t>& group) {
  const WorkPlane& p = t.planes[group.front()];
  RunShape shape{.width = t.width, .height = t.height, .psf_width = p.psf->image.width,
                 .psf_height = p.psf->image.height, .planes = group.size()};
  if (p.beam) shape.beam = *p.beam;
  return shape;
}

// The least free memory among the GPUs the run uses.
std::size_t least_free(const std::vector<int>& gpus) {
  if (gpus.empty()) return cuda::device_memory().free_bytes;
  std::size_t least = 0;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const cuda::ScopedDevice on(gpus[i]);
    const std::size_t free = cuda::device_memory().free_bytes;
    least = i == 0 ? free : std::min(least, free);
  }
  return least;
}

// The GPUs in their order, each once.
std::vector<int> distinct(const std::vector<int>& gpus) {
  std::vector<int> out;
  for (int g : gpus)
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  return out;
}

// The joined split asked for whether it is needed or not (PlanRequest::split_joined).
bool split_forced(const PlanRequest& request) {
  const char* env = std::getenv("GPUCLEAN_SPLIT_JOINED");
  return request.split_joined || (env && std::string(env) == "1");
}

}  // namespace

Device resolve_device(Device requested, std::string* note) {
  if (requested == Device::kCpu) return Device::kCpu;
  if (requested == Device::kGpu) {
    if (!cuda::built_with_cuda())
      throw InvalidSettings("this gpuclean was built without CUDA; use --device cpu (or auto), or rebuild with nvcc.");
    if (!cuda::has_usable_device())
      throw GpuUnavailable("--device gpu, but " + cuda::describe_device() + "; use --device cpu (or auto).");
    return Device::kGpu;
  }
  const bool gpu = cuda::built_with_cuda() && cuda::has_usable_device();
  if (note) *note = "device: " + cuda::describe_device() + "; using the " + (gpu ? "GPU" : "CPU") + " path";
  return gpu ? Device::kGpu : Device::kCpu;
}

RunPlan plan_run(const WorkTable& t, const CleanSettings& s, Device device, const PlanRequest& request) {
  RunPlan plan;
  plan.device = device;
  if (t.groups.empty()) throw InvalidInput("the work table has no group of planes to clean.");
  if (device != Device::kGpu) return plan;
  plan.gpus = request.gpus;

  // Every group is planned as the first: the front ends' groups share one shape.
  RunShape shape = group_shape(t, t.groups.front());
  const std::size_t gpus = std::max<std::size_t>(plan.gpus.size(), 1);
  const std::size_t free = request.free_bytes ? request.free_bytes : least_free(plan.gpus);
  const std::size_t need = gpu_bytes_needed(shape, s);
  plan.gpu_bytes = need;
  // A joined group that does not fit one GPU is split over the distinct GPUs (asked for, over
  // the list as given: tests split over {0, 0}).
  const std::vector<int> split_over = split_forced(request) ? plan.gpus : distinct(plan.gpus);
  if (shape.planes > 1 && split_over.size() > 1 && (need > free || split_forced(request))) {
    RunShape split = shape;
    split.split = std::min(split_over.size(), shape.planes);
    const std::size_t per_gpu = gpu_bytes_needed(split, s);
    if (per_gpu <= free) {
      plan.split_gpus.assign(split_over.begin(), split_over.begin() + static_cast<std::ptrdiff_t>(split.split));
      plan.gpu_bytes = per_gpu;
      plan.workers = 1;  // one group at a time, over all of its GPUs
      return plan;
    }
  }
  if (need <= free) {
    const std::size_t spare = std::max<std::size_t>(free * 9 / 10 / std::max<std::size_t>(need, 1), 1);
    plan.workers = plan_workers(t.groups.size(), gpus, request.parallel, spare);
    return plan;
  }
  // A joined group: its planes stream through the device in the largest block that fits.
  std::size_t smallest = need;
  for (std::size_t block = shape.planes - 1; shape.planes > 1 && block >= 1; --block) {
    shape.device_planes = block;
    const std::size_t bytes = gpu_bytes_needed(shape, s);
    smallest = bytes;
    if (bytes <= free) {
      plan.device_planes = block;
      plan.gpu_bytes = bytes;
      return plan;  // one group at a time
    }
  }
  std::string what = "a " + std::to_string(t.width) + "x" + std::to_string(t.height) + " image";
  if (shape.planes > 1)
    what += " of " + std::to_string(shape.planes) + " joined planes needs " + gib(need) + " of GPU memory (" +
            gib(smallest) + " with one plane at a time on the device)";
  else
    what += " needs " + gib(need) + " of GPU memory";
  const std::string message = what + " but " + gib(free) + " is free on " + cuda::describe_device() +
                              "; use --device cpu (or auto), a smaller image, or a GPU with more memory.";
  if (s.device == Device::kGpu) throw InsufficientGpuMemory(message);
  plan.fallback = message + " Running on the CPU instead.";
  plan.device = Device::kCpu;
  plan.workers = 1;
  plan.gpus.clear();
  plan.gpu_bytes = 0;
  return plan;
}

std::size_t least_free_gpu_memory(const std::vector<int>& gpus) { return least_free(gpus); }

}  // namespace gpuclean::clean

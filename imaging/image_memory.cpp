#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include "clean/errors.hpp"
#include "imaging/image_run.hpp"
#include "imaging/weight_grid.hpp"
#ifdef GPUCLEAN_HAVE_CUDA
#include "imaging/gpu/gridder_gpu.hpp"
#endif

// The memory check of plan §4.6, made before any visibility is read (image_run.hpp).

namespace gpuclean::imaging {
namespace {

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

/// `key` ("MemAvailable:", "MemTotal:") of /proc/meminfo in bytes; 0 when it cannot be read
/// (then nothing is refused). Test seam: GPUCLEAN_TEST_HOST_MEMORY (bytes) stands for both.
double meminfo_bytes(const char* key) {
  if (const char* test = std::getenv("GPUCLEAN_TEST_HOST_MEMORY")) return std::strtod(test, nullptr);
  std::ifstream in("/proc/meminfo");
  std::string name;
  double kib = 0;
  std::string unit;
  while (in >> name >> kib >> unit)
    if (name == key) return kib * 1024.0;
  return 0;
}

}  // namespace

std::string check_image_memory(const std::vector<io::ms::MsSelection>& selections, const ImageRunSettings& settings) {
  // Host: every selected sample as read (value 8 B, weight 4 B; per row u, v, w and the row
  // number, 32 B), one output channel's gridder samples at a time (u, v, w, value, PSF value, cw:
  // 44 B) and the weight grids (doubles over the padded half plane).
  double rows = 0, samples = 0;
  for (const io::ms::MsSelection& sel : selections) {
    rows += static_cast<double>(sel.rows);
    samples += static_cast<double>(sel.rows) * static_cast<double>(sel.freq_hz.size());
  }
  const double per_channel = samples / static_cast<double>(std::max<std::size_t>(settings.channels_out, 1));
  const double pw = static_cast<double>(padded_size(settings.image.width, settings.padding));
  const double ph = static_cast<double>(padded_size(settings.image.height, settings.padding));
  const double grids = (settings.mf_weighting ? 1.0 : static_cast<double>(settings.channels_out)) * pw * ph / 2 * 8;
  const double images = static_cast<double>(settings.image.width * settings.image.height) * 8 *
                        static_cast<double>(settings.channels_out + 1) * (settings.make_psf ? 2 : 1);
  // Over several GPUs (image_run) each GPU holds one channel's samples at a time.
  const std::size_t lanes = settings.device == clean::Device::kGpu ? settings.gpus.size() : 1;
  const auto at_once = static_cast<double>(std::clamp<std::size_t>(lanes, 1, std::max<std::size_t>(settings.channels_out, 1)));
  const double host = samples * 12 + rows * 32 + per_channel * 44 * at_once + grids + images;
  // WSClean's -mem and -abs-mem (W37:structures/resources.cpp): the least of the machine's memory
  // x the fraction, the absolute cap, and what is available now.
  double available = meminfo_bytes("MemAvailable:");
  double cap = 0;
  if (settings.host_memory_fraction < 1.0) cap = meminfo_bytes("MemTotal:") * settings.host_memory_fraction;
  if (settings.host_memory_bytes > 0) cap = cap > 0 ? std::min(cap, settings.host_memory_bytes) : settings.host_memory_bytes;
  const bool capped = cap > 0 && (available <= 0 || cap < available);
  if (capped) available = cap;
  if (available > 0 && host > available)
    throw clean::InsufficientHostMemory("imaging " + std::to_string(static_cast<long long>(samples)) + " samples needs " +
                              gib(host) + " of host memory and " + gib(available) +
                              (capped ? " is allowed (-mem, -abs-mem)" : " is available") +
                              "; select fewer channels (-channel-range) or rows" +
                              (capped ? ", or allow more memory" : ""));
  std::string plan = "host " + gib(host) + " of " + gib(available) + (capped ? " allowed by -mem/-abs-mem" : " available");
  if (settings.device != clean::Device::kGpu) return plan;
#ifdef GPUCLEAN_HAVE_CUDA
  // GPU: the largest grid any candidate kernel could choose (the w range, known only after the
  // read, changes the planes, not the grid); the samples themselves stream in chunks.
  GpuGridderOptions options;
  options.device = settings.gpu;
  options.budget_bytes = settings.gpu_budget_bytes;
  std::optional<GridPlan> largest;
  for (const EsKernel& k : es_kernel_candidates(per_dimension_epsilon(settings.epsilon, true))) {
    GridPlan p = make_grid_plan(settings.image, k, WRange{0, 0});
    if (!largest || p.nu * p.nv > largest->nu * largest->nv) largest = std::move(p);
  }
  if (!largest) throw std::invalid_argument("no ES kernel reaches the requested accuracy");
  const GpuGridderMemory gpu = plan_gpu_gridder_memory(*largest, 256, settings.make_psf ? 2 : 1, options);
  return plan + "; " + gpu.describe();
#else
  throw clean::InvalidSettings("this gpuclean was built without CUDA; image with -device cpu");
#endif
}

}  // namespace gpuclean::imaging

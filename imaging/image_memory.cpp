#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include "clean/errors.hpp"
#include "imaging/es_kernel.hpp"
#include "imaging/grid_plan.hpp"
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

/// What the host may use: the least of MemAvailable, -mem's share of MemTotal and -abs-mem
/// (W37:structures/resources.cpp); `capped`: -mem or -abs-mem set it. 0: unknown (nothing refused).
double available_bytes(const ImageRunSettings& settings, bool* capped) {
  double available = meminfo_bytes("MemAvailable:");
  double cap = 0;
  if (settings.host_memory_fraction < 1.0) cap = meminfo_bytes("MemTotal:") * settings.host_memory_fraction;
  if (settings.host_memory_bytes > 0) cap = cap > 0 ? std::min(cap, settings.host_memory_bytes) : settings.host_memory_bytes;
  *capped = cap > 0 && (available <= 0 || cap < available);
  return *capped ? cap : available;
}

/// The host memory a run plans for: the part -size sets (with -channels-out, -padding, -make-psf,
/// -niter) and the part the selected visibilities set.
struct HostPlan {
  double images = 0;        ///< every output channel's images and the MFS's
  double weight_grids = 0;  ///< doubles over the padded half plane, one per output channel (one with MF weighting)
  double gridder = 0;       ///< CPU: one plane of the gridder's grid (the smallest kernel's) and its image-sized buffers
  double samples = 0;       ///< the samples as read and one output channel's gridder samples at a time
  double size_part() const { return images + weight_grids + gridder; }
  double total() const { return size_part() + samples; }
};

HostPlan size_plan(const ImageRunSettings& settings) {
  HostPlan p;
  const double pixels = static_cast<double>(settings.image.width) * static_cast<double>(settings.image.height);
  const double outputs = static_cast<double>(settings.channels_out + (settings.channels_out > 1 ? 1 : 0));  // + MFS
  // Imaging: the dirty image and the PSF in double. Deconvolution adds the residual, model and
  // restored image in double and the cleaned planes' dirty image, PSF, model and residual in float.
  const double per_pixel = settings.deconvolution ? 8.0 * 2 + 8.0 * 3 + 4.0 * 4 : (settings.make_psf ? 16.0 : 8.0);
  p.images = pixels * per_pixel * outputs;
  const double pw = static_cast<double>(padded_size(settings.image.width, settings.padding));
  const double ph = static_cast<double>(padded_size(settings.image.height, settings.padding));
  p.weight_grids = (settings.mf_weighting ? 1.0 : static_cast<double>(settings.channels_out)) * pw * ph / 2 * 8;
  if (settings.device != clean::Device::kGpu) {
    // The CPU gridder: a complex-float plane of nu x nv cells, and the plane sum, n - 1 and the
    // correction over the image in double. The kernel (so nu, nv) is chosen after the read; the
    // smallest candidate's grid is counted, so that no run that could fit is refused.
    double cells = 0;
    for (const EsKernel& k : es_kernel_candidates(per_dimension_epsilon(settings.epsilon, true))) {
      const GridPlan g = make_grid_plan(settings.image, k, WRange{0, 0});
      const double c = static_cast<double>(g.nu) * static_cast<double>(g.nv);
      if (cells == 0 || c < cells) cells = c;
    }
    p.gridder = cells * 8 + pixels * 8 * 3;
  }
  return p;
}

std::string size_text(const ImageRunSettings& settings) {
  return "-size " + std::to_string(settings.image.width) + " " + std::to_string(settings.image.height);
}

/// The refusal of a -size whose images and grids alone do not fit.
[[noreturn]] void refuse_size(const ImageRunSettings& settings, const HostPlan& p, double available, bool capped) {
  std::string parts = "images " + gib(p.images) + ", weight grid" + (settings.mf_weighting || settings.channels_out == 1 ? " " : "s ") +
                      gib(p.weight_grids);
  if (p.gridder > 0) parts += ", the CPU gridder's plane and buffers " + gib(p.gridder);
  throw clean::InsufficientHostMemory(
      size_text(settings) + " needs at least " + gib(p.size_part()) + " of host memory before any visibility (" +
      parts + (settings.channels_out > 1 ? ", " + std::to_string(settings.channels_out) + " output channels" : "") +
      ") and " + gib(available) + (capped ? " is allowed (-mem, -abs-mem)" : " is available") +
      "; give a smaller -size" + (settings.channels_out > 1 ? " or fewer -channels-out" : "") +
      (capped ? ", or allow more memory" : ""));
}

/// GPU: the largest grid any candidate kernel could choose (the w range, known only after the
/// read, changes the planes, not the grid); the samples themselves stream in chunks. Throws
/// clean::InsufficientGpuMemory when its fixed part does not fit the device. Empty on the CPU.
std::string gpu_plan(const ImageRunSettings& settings) {
  if (settings.device != clean::Device::kGpu) return "";
#ifdef GPUCLEAN_HAVE_CUDA
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
  return "; " + gpu.describe();
#else
  throw clean::InvalidSettings("this gpuclean was built without CUDA; image with -device cpu");
#endif
}

}  // namespace

std::string check_image_size_memory(const ImageRunSettings& settings) {
  const HostPlan p = size_plan(settings);
  bool capped = false;
  const double available = available_bytes(settings, &capped);
  if (available > 0 && p.size_part() > available) refuse_size(settings, p, available, capped);
  return "host " + gib(p.size_part()) + " for " + size_text(settings) + gpu_plan(settings);
}

std::string check_image_memory(const std::vector<io::ms::MsSelection>& selections, const ImageRunSettings& settings) {
  // Host: every selected sample as read (value 8 B, weight 4 B; per row u, v, w and the row
  // number, 32 B), one output channel's gridder samples at a time (u, v, w, value, PSF value, cw:
  // 44 B) or, for the deconvolution's VisStore (make_vis_store), every channel's at once, and
  // what -size sets (size_plan).
  double rows = 0, samples = 0;
  for (const io::ms::MsSelection& sel : selections) {
    rows += static_cast<double>(sel.rows);
    samples += static_cast<double>(sel.rows) * static_cast<double>(sel.freq_hz.size());
  }
  const double per_channel = samples / static_cast<double>(std::max<std::size_t>(settings.channels_out, 1));
  // Over several GPUs (image_run) each GPU holds one channel's samples at a time.
  const std::size_t lanes = settings.device == clean::Device::kGpu ? settings.gpus.size() : 1;
  const auto at_once = static_cast<double>(std::clamp<std::size_t>(lanes, 1, std::max<std::size_t>(settings.channels_out, 1)));
  HostPlan p = size_plan(settings);
  p.samples = samples * 12 + rows * 32 + (settings.deconvolution ? samples : per_channel * at_once) * 44;
  bool capped = false;
  const double available = available_bytes(settings, &capped);
  if (available > 0 && p.size_part() > available) refuse_size(settings, p, available, capped);
  if (available > 0 && p.total() > available)
    throw clean::InsufficientHostMemory(
        "imaging " + std::to_string(static_cast<long long>(samples)) + " samples needs " + gib(p.total()) +
        " of host memory (the visibilities " + gib(p.samples) + ", the images and grids of " + size_text(settings) +
        " " + gib(p.size_part()) + ") and " + gib(available) +
        (capped ? " is allowed (-mem, -abs-mem)" : " is available") + "; " +
        (p.samples >= p.size_part() ? "select fewer channels (-channel-range) or rows"
                                    : "give a smaller -size, or select fewer channels (-channel-range) or rows") +
        (capped ? ", or allow more memory" : ""));
  return "host " + gib(p.total()) + " of " + gib(available) + (capped ? " allowed by -mem/-abs-mem" : " available") +
         gpu_plan(settings);
}

}  // namespace gpuclean::imaging

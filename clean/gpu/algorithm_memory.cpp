#include "clean/gpu/algorithm_memory.hpp"

#include <algorithm>

#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/joined_planes_gpu.hpp"
#include "clean/gpu/joined_split_gpu.hpp"
#include "clean/gpu/minor_engine.hpp"

namespace gpuclean::clean::gpu {

std::size_t clark_gpu_bytes(const RunShape& shape, const CleanSettings& settings,
                            const std::vector<CleanScale>& scales) {
  const std::size_t w = shape.width, h = shape.height;
  const std::size_t k = std::min(settings.select_k, w * h);
  std::size_t bytes = k * 16 + sort_by_pixel_temp_bytes(k) +
                      MinorCycleEngine::bytes_needed(w, h, static_cast<int>(settings.beam_patch), k,
                                                     std::min<std::size_t>(settings.niter, 1u << 22));
  if (shape.planes > 1) {
    std::vector<std::size_t> patches;
    for (const CleanScale& sc : scales) patches.push_back(sc.patch);
    bytes += shape.split > 1 ? JoinedSplitGpu::bytes_needed(shape.planes, shape.split, w, h, shape.psf_width,
                                                            shape.psf_height, patches, k, settings.niter)
                             : JoinedPlanesGpu::bytes_needed(shape.planes, shape.device_planes, w, h, shape.psf_width,
                                                             shape.psf_height, patches, k, settings.niter);
  }
  return bytes;
}

std::vector<CleanScale> estimated_scales(const RunShape& shape, const CleanSettings& settings) {
  const double beam = scale_beam_pixels(settings, shape.beam ? shape.beam->fwhm_major_pixels() : 1.0);
  return plan_scales(settings, beam, shape.width, shape.height, std::max(shape.psf_width, shape.psf_height));
}

std::size_t hogbom_gpu_bytes(const RunShape&, const CleanSettings&, const std::vector<CleanScale>&) { return 0; }

}  // namespace gpuclean::clean::gpu

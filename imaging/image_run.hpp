#pragma once
// One `gpuclean image` run on the CPU (imaging-plan.md §1 steps 5–8, §3, §5): the selected
// visibilities of every MS → imaging weights → the dirty image and PSF of each output channel,
// normalised as WSClean does, and the MFS images when there are several output channels.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "clean/clean_settings.hpp"
#include "imaging/grid_plan.hpp"
#include "imaging/vis_store.hpp"
#include "imaging/weighting.hpp"
#include "io/ms/ms_selection.hpp"

namespace gpuclean::imaging {

struct ImageRunSettings {
  ImageGeometry image;        ///< -size, -scale (radians)
  double padding = 1.2;       ///< -padding: sizes the weight grid only (WSClean's default 1.2)
  WeightingSettings weighting;
  bool mf_weighting = false;  ///< one weight grid over every output channel
  std::size_t channels_out = 1;
  /// -channel-division-frequencies: the band is split at these frequencies (Hz) first, and the
  /// output channels shared among the parts (output_channel_ranges).
  std::vector<double> channel_division_hz;
  bool make_psf = false;      ///< -make-psf: the PSF is imaged and its centre normalises both
  double epsilon = 1e-4;      ///< the gridder's accuracy (WSClean's wgridder default)
  int threads = 0;            ///< ≤ 0: OpenMP's default
  /// kGpu or kCpu, as clean::resolve_device answered (kAuto is not resolved here). The CPU
  /// gridder is the GPU's reference; both give the same images to float summation order.
  clean::Device device = clean::Device::kCpu;
  int gpu = 0;                  ///< CUDA device index for kGpu
  /// kGpu over several GPUs (-max-gpus): the VisStore's channels spread over these (a device may
  /// repeat: two lanes on it); empty or one: `gpu` alone.
  std::vector<int> gpus;
  std::size_t gpu_budget_bytes = 0;  ///< GPU gridder budget; 0: free memory less a margin
  /// -mem (a fraction of the machine's memory) and -abs-mem (bytes, 0: none): the host memory the
  /// run may plan for is the least of these and what is available.
  double host_memory_fraction = 1.0;
  double host_memory_bytes = 0;
  /// -niter > 0: the host memory plan also counts the deconvolution's images (each output
  /// channel's residual, model and restored image, and the cleaned planes in float).
  bool deconvolution = false;
};

/// Where the time of one run went (seconds, host wall clock) and how much was gridded.
struct ImageTimings {
  double read_s = 0, weights_s = 0, invert_s = 0;
  std::size_t inversions = 0;   ///< images made by the gridder (a dirty image and a PSF count 2)
  std::size_t samples = 0;      ///< gridded samples (nonzero cw), summed over output channels
  double grid_kernel_s = 0;     ///< GPU only: time in the gridding kernels (CUDA events)
  std::size_t gpu_chunks = 0;   ///< GPU only: sample chunks (1 per channel when resident)
  std::string memory_plan;      ///< GPU only: the first channel's memory plan, one line
};

/// One output channel (or the MFS combination): row-major [y][x] images in Jy/beam.
struct ChannelImage {
  std::size_t channel_begin = 0, channel_end = 0;  ///< of the selected channels, [begin, end)
  double band_start_hz = 0, band_end_hz = 0;       ///< lowest − width/2 .. highest + width/2
  std::vector<double> dirty, psf;                  ///< psf empty without make_psf
  WeightCounters counters;  ///< WSCNVIS, WSCVWSUM, WSCENVIS (the MFS: channel 0's, as WSClean writes)
  double imgwg = 0;          ///< WSCIMGWG = WSCNORMF: Σcw (the MFS: the channels' sum)
  double psf_centre = 1;     ///< the Σcw-normalised PSF's centre pixel both were divided by (1 without a PSF)
  /// 1 / the longest weighted baseline |uvw| (λ) inside the image's Nyquist box: WSClean's
  /// theoretic beam, the start of its beam fit (W31:gridding/msgridderbase.cpp calculateWLimits).
  /// The MFS: the last channel's.
  double theoretic_beam_rad = 0;
  std::size_t w_planes = 0;  ///< of the grid plan used (the PSF's and the dirty image's)
  std::size_t kernel_support = 0;
};

struct ImageRunResult {
  std::vector<ChannelImage> channels;
  std::optional<ChannelImage> mfs;  ///< with channels_out > 1
  ImageTimings timings;
};

/// Checks, before any MS is opened, what -size alone needs (with -channels-out, -padding,
/// -make-psf, -niter): the host's images and weight grids and, on the CPU, one plane of the
/// gridder's grid; for the GPU, the gridder's fixed part on the device. Throws
/// clean::InsufficientHostMemory with a line that names -size and the sizes (exit 4), or
/// clean::InsufficientGpuMemory; returns the plan as a line.
std::string check_image_size_memory(const ImageRunSettings& settings);

/// Checks, before any visibility is read, that the host can hold the selection (the samples and
/// their per-channel copies) and, for the GPU, that the gridder's fixed part (grids, cuFFT work
/// area, accumulators) fits the device: the samples themselves stream in chunks. Throws
/// clean::InsufficientGpuMemory or clean::InsufficientHostMemory (exit 4) with the sizes and the
/// part at fault (-size, or the selected visibilities); returns the plan as a line.
std::string check_image_memory(const std::vector<io::ms::MsSelection>& selections, const ImageRunSettings& settings);

/// WSClean's division of N selected channels into n outputs: output j takes [j·N/n, (j+1)·N/n).
/// Throws clean::InvalidSettings when n is 0 or larger than N (an output would be empty).
std::vector<std::pair<std::size_t, std::size_t>> output_channel_ranges(std::size_t selected, std::size_t n);

/// The same over the selected channels' frequencies (ascending) with WSClean's
/// -channel-division-frequencies (W31:main/wsclean.cpp makeImagingTableEntry): the band is cut at
/// `division_hz` into parts, part i gets outputs [n·i/(S+1), n·(i+1)/(S+1)) (S cuts), each part's
/// channels divided among its outputs as above. Throws clean::InvalidSettings when a part has
/// fewer channels than outputs.
std::vector<std::pair<std::size_t, std::size_t>> output_channel_ranges(const std::vector<double>& freq_hz,
                                                                       std::size_t n,
                                                                       const std::vector<double>& division_hz);

/// Reads every MS of `selections` (as select_visibilities made them; same channels), weights and
/// images. Throws MsError for unreadable data or when nothing is weighted.
ImageRunResult image_run(const std::vector<io::ms::MsSelection>& selections, const ImageRunSettings& settings);

/// The major cycles' VisStore of a run: read and weighted as image_run, each output channel's
/// samples made once, with Σcw of its counters; on the GPU (settings.device kGpu) its samples stay
/// prepared on the device when they fit (vis_store_gpu.hpp). `headers` (if given) gets each
/// channel's ChannelImage without images (range, band, counters, WSCIMGWG, theoretic beam, plan).
/// Throws as image_run, and clean::InvalidSettings for the GPU in a build without CUDA.
VisStore make_vis_store(const std::vector<io::ms::MsSelection>& selections, const ImageRunSettings& settings,
                        std::vector<ChannelImage>* headers = nullptr);

/// WSClean's MFS image: per pixel Σ_c WSCIMGWG_c·I_c / Σ_c WSCIMGWG_c over the channels whose pixel
/// is finite, summed from the float values the channel files hold (W31:math/imageoperations.cpp
/// MakeMFSImage).
std::vector<double> mfs_mean(const std::vector<const std::vector<double>*>& images, const std::vector<double>& weights);

}  // namespace gpuclean::imaging

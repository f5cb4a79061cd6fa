#pragma once
// The GPU w-stacking gridder and degridder (imaging-plan.md §4.4, §4.6): the same algorithm, plan,
// sample order and conventions as invert_cpu/predict_cpu (gridder_cpu.hpp), which are its
// reference; GPU = CPU up to float summation order (about 1e-6 of the peak).
//
// One call, on one stream of `device`:
//   1. host: every sample's first plane p0 = ⌈Kw − W/2⌉ (only w is needed), a stable counting
//      sort by p0, and the memory plan (checked before any work);
//   2. per chunk of that order that fits the budget (all of it when resident): upload; per sample
//      flip to w ≥ 0, n-shift phase, Ku/Kv/Kw in double, key (p0, 32-cell tile row, tile column);
//      CUB radix sort; records in sorted order; tile subproblems of ≤ 1024 samples;
//   3. per plane of the chunk, [min p0, max p0 + W − 1]: zero the grid(s), grid every tile
//      subproblem into shared memory and add it to the grid (atomics only there), one batched
//      C2C FFT (dirty and PSF together), screen e^{−2πi w_p t} into double accumulators. Predict
//      runs the adjoint: model·c·e^{+2πi w_p t} onto the grid, inverse FFT, one thread per sample
//      gathers W² cells (no atomics);
//   4. the corrections c(x/nu)·c(y/nv)·c(t·dw) once at the end (invert) or first (predict).
// Chunks share planes at their edges: such a plane is transformed once per chunk and the
// contributions add (the transform is linear), so streamed = resident up to summation order.
// Precision: coordinates and phases in double (w·t reaches 1e2 turns), kernel values float,
// grids float2, image accumulators double.

#include <complex>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "imaging/gridder_cpu.hpp"

namespace gpuclean::imaging {

struct GpuGridderOptions {
  int device = 0;
  /// Device bytes the gridder may use. 0: the free memory less a margin. The environment
  /// variable GPUCLEAN_TEST_IMAGING_BUDGET (bytes), when set, overrides both (tests force
  /// streaming through it).
  std::size_t budget_bytes = 0;
};

/// Which direction a memory plan is for (their per-sample buffers differ).
enum class GridderPass { kInvert, kPredict };

/// The device memory of one call: what does not depend on the samples (grids, cuFFT's work area,
/// image accumulators, ...) and what each sample of a chunk needs; chunk_samples of them fit.
struct GpuGridderMemory {
  std::size_t fixed_bytes = 0, per_sample_bytes = 0, chunk_samples = 0, chunks = 0;
  std::size_t budget_bytes = 0;  ///< the budget the plan was made for
  /// One line such as "GPU gridder: 2 grids of 10240×10240, 4.41 GiB fixed + 121 B per sample;
  /// 1 chunk of 8000000 samples within a budget of 70.00 GiB".
  std::string describe() const;
};

/// The memory plan for `samples` samples (those that will be gridded) and `images` grids per plane
/// (1 or 2: dirty and PSF; predict: 1). Throws clean::InsufficientGpuMemory, whose message says
/// how much is needed and how much there is, when not even the fixed part and 256 samples (or all
/// of them, if fewer) fit. Makes (and caches) the cuFFT plan to learn its work area.
GpuGridderMemory plan_gpu_gridder_memory(const GridPlan& plan, std::size_t samples, std::size_t images,
                                         const GpuGridderOptions& options = {},
                                         GridderPass pass = GridderPass::kInvert);

/// Device times of one call, from CUDA events on its stream (ms), and its size.
struct GridderTimings {
  double upload_ms = 0;    ///< samples to the device
  double prep_ms = 0;      ///< keys, radix sort, records, subproblems
  double grid_ms = 0;      ///< gridding (invert) or degridding (predict), grid zeroing included
  double fft_ms = 0;
  double screen_ms = 0;    ///< plane screens into the accumulators, or the model onto the grid
  double correct_ms = 0;   ///< the kernel corrections
  double download_ms = 0;  ///< images or visibilities to the host
  double wall_ms = 0;      ///< host wall clock of the whole call, host sorting included
  std::size_t samples = 0;  ///< samples gridded (invert: nonzero weight) or predicted
  std::size_t planes = 0;   ///< plane sweeps (one batched FFT each), summed over chunks
  std::size_t chunks = 0;
  std::string describe() const;
};

struct InvertOutput {
  std::vector<double> dirty, psf;  ///< [y][x]; empty when not asked for
  GridderTimings timings;
};

/// invert_cpu on the GPU: the dirty image (samples' values) and/or the PSF (the same samples with
/// value 1, i.e. weight cw), both gridded in one pass (two grids per plane, one batched FFT).
/// Not divided by Σcw. Samples of weight 0 are skipped; the others must have |w| inside the plan
/// (std::invalid_argument otherwise, as invert_cpu). `vis` is read only for the dirty image.
InvertOutput invert_gpu(const GridPlan& plan, const Samples& samples, bool dirty, bool psf,
                        const GpuGridderOptions& options = {});

/// predict_cpu on the GPU: V_k = Σ M(x, y) e^{+2πi(u l + v m + w(n − 1))}, the adjoint of
/// invert_gpu with unit weights. Only u, v, w are read; every sample's |w| must lie inside the plan.
std::vector<std::complex<double>> predict_gpu(const GridPlan& plan, std::span<const double> model,
                                              const Samples& samples, const GpuGridderOptions& options = {},
                                              GridderTimings* timings = nullptr);

}  // namespace gpuclean::imaging

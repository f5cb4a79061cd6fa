#pragma once
// The plane transform of the GPU gridder, pruned (imaging-plan.md §4.4): a plane's grid holds
// data only in the u columns its samples reach, |Ku| ≤ max|u|·scale·nu + W/2 (wrapped round
// column 0), and the screen reads only the image's rows (y − H/2 wrapped round row 0). So the
// 2-D transform becomes
//   invert:  1-D C2C along v over the band's columns only (strided by nu; the columns outside
//            it are zero and stay zero), then 1-D C2C along u over the image's rows only;
//   predict: the adjoint: along u over the image's rows (every other row is zero), then along v
//            over the band's columns (the degridder reads no other column).
// Both sets are two blocks, [0, k) and [n − k, n): one plan per pass serves both blocks and every
// grid of a batch. Exact at the cells that are read: the skipped transforms are of zero inputs or
// have outputs nobody reads. Summation order differs from the 2-D transform (≈ 1e-7 of the peak).
//
// Why strided columns and no transpose: cuFFT's own 2-D plans run their v pass on this same
// layout (adjacent transforms adjacent in memory, so each warp's loads are coalesced along u), and
// a transpose would add two passes over the band (≈ 0.6 of a 2-D transform's traffic per plane).
// The full 2-D transform stays selectable (GpuGridderOptions::full_fft, GPUCLEAN_TEST_FULL_FFT)
// to check both against each other on the device.

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "imaging/gpu/fft_plan_pool.hpp"
#include "imaging/grid_plan.hpp"

namespace gpuclean::imaging::gpu {

/// The columns [0, columns) ∪ [nu − columns, nu) and rows [0, rows) ∪ [nv − rows, nv) a plane's
/// transform covers (each ≤ half the grid: at half it is all of it).
struct FftBand {
  std::size_t columns = 0, rows = 0;
};

/// Columns are counted in multiples of this (clamped to nu/2), so that the plans of neighbouring
/// channels' bands coincide: max(16, ⌈nu/64⌉ rounded up to 16), e.g. 192 at nu = 11520.
std::size_t band_granularity(std::size_t nu);

/// The band of samples whose |u| ≤ max_abs_u (in wavelengths; ∞ or NaN: every column), and the
/// image's rows; `full`: the whole grid.
FftBand fft_band(const GridPlan& plan, double max_abs_u, bool full = false);

/// `option`, or GPUCLEAN_TEST_FULL_FFT set to anything but "" or "0": the full 2-D transform.
bool full_fft_wanted(bool option);

/// The transforms of one call: pruned, or the full 2-D transform of all grids at once.
class PlaneFft {
 public:
  /// Plans for `images` consecutive grids of the plan (their columns set by set_band).
  PlaneFft(const GridPlan& plan, int images, bool full);
  ~PlaneFft();

  /// The work area a call needs: the largest of its plans', the widest column band included.
  std::size_t work_bytes() const { return work_bytes_; }
  static std::size_t work_bytes(const GridPlan& plan, int images, bool full) {
    return PlaneFft(plan, images, full).work_bytes();
  }

  /// Runs on `stream` with `work` (work_bytes()) as the work area of every plan.
  void bind(cudaStream_t stream, void* work);
  /// The columns of the samples that follow (per chunk); the rows are the image's.
  void set_band(const FftBand& band);
  const FftBand& band() const { return band_; }

  /// Invert: the 2-D forward transform of every grid, exact at the band's rows.
  void forward(float2* grids);
  /// Predict: the 2-D inverse transform, exact at the band's columns; the input must be zero in
  /// every row of the band's columns outside its rows (model_to_grid writes them so).
  void inverse(float2* grids);

 private:
  void columns(float2* grids, bool forward);
  void rows(float2* grids, bool forward);

  std::size_t nu_, nv_;
  int images_;
  bool full_;
  FftBand band_;
  std::unique_ptr<FftPlanLease> grids_plan_, row_plan_, column_plan_;
  cudaStream_t stream_ = nullptr;
  void* work_ = nullptr;
  std::size_t work_bytes_ = 0;
};

}  // namespace gpuclean::imaging::gpu

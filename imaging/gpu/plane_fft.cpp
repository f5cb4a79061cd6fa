#include "imaging/gpu/plane_fft.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace gpuclean::imaging::gpu {
namespace {

std::size_t round_up(std::size_t n, std::size_t q) { return (n + q - 1) / q * q; }

void exec(FftPlanLease& plan, float2* data, bool forward) {
  if (forward) plan.forward(data);
  else plan.inverse(data);
}

}  // namespace

bool full_fft_wanted(bool option) {
  const char* env = std::getenv("GPUCLEAN_TEST_FULL_FFT");
  return option || (env && *env && std::strcmp(env, "0") != 0);
}

std::size_t band_granularity(std::size_t nu) { return std::max<std::size_t>(16, round_up((nu + 63) / 64, 16)); }

FftBand fft_band(const GridPlan& plan, double max_abs_u, bool full) {
  FftBand b{plan.nu / 2, plan.nv / 2};  // nu and nv are even (grid_plan.cpp)
  if (full) return b;
  // The footprint's cells ⌈Ku − W/2⌉ + a, a < W, lie within |s| ≤ |Ku| + W/2 (s before the wrap),
  // so columns 0 ..= ⌊M + W/2⌋ and nu − ⌊M + W/2⌋ ..< nu with M = max|Ku| = max|u|·scale·nu (the
  // device's su, the same product); one more column against rounding.
  const double m = max_abs_u * plan.image.scale * static_cast<double>(plan.nu) + 0.5 * plan.kernel.support();
  if (m < static_cast<double>(plan.nu)) {
    const auto needed = static_cast<std::size_t>(std::floor(m)) + 2;
    b.columns = std::min(b.columns, round_up(needed, band_granularity(plan.nu)));
  }
  // Image row y is grid row y − H/2 wrapped: rows [0, H − H/2) and [nv − H/2, nv); one plan of
  // ⌈H/2⌉ rows takes both blocks (for odd H one more row of the upper block, which must not
  // overlap the lower one, hence the clamp).
  b.rows = std::min(b.rows, (plan.image.height + 1) / 2);
  return b;
}

PlaneFft::PlaneFft(const GridPlan& plan, int images, bool full)
    : nu_(plan.nu), nv_(plan.nv), images_(images), full_(full), band_{nu_ / 2, nv_ / 2} {
  if (full_) {
    grids_plan_ = std::make_unique<FftPlanLease>(FftLayout::grids(nu_, nv_, static_cast<std::size_t>(images)));
    work_bytes_ = grids_plan_->work_bytes();
    return;
  }
  // The widest band first: its work area is the one the memory plan counts.
  band_.rows = fft_band(plan, 0).rows;
  row_plan_ = std::make_unique<FftPlanLease>(FftLayout::rows(nu_, band_.rows));
  column_plan_ = std::make_unique<FftPlanLease>(FftLayout::columns(nu_, nv_, band_.columns));
  work_bytes_ = std::max(row_plan_->work_bytes(), column_plan_->work_bytes());
}

PlaneFft::~PlaneFft() = default;

void PlaneFft::bind(cudaStream_t stream, void* work) {
  stream_ = stream, work_ = work;
  for (auto* p : {grids_plan_.get(), row_plan_.get(), column_plan_.get()})
    if (p) p->bind(stream, work);
}

void PlaneFft::set_band(const FftBand& band) {
  if (full_ || band.columns == band_.columns) return;
  if (band.columns == 0 || band.columns > nu_ / 2) throw std::invalid_argument("PlaneFft: a band of 1 to nu/2 columns");
  column_plan_.reset();  // back to the pool before the next lease
  auto plan = std::make_unique<FftPlanLease>(FftLayout::columns(nu_, nv_, band.columns));
  std::size_t columns = band.columns;
  if (plan->work_bytes() > work_bytes_) {  // not seen; the memory plan sized the widest band
    plan = std::make_unique<FftPlanLease>(FftLayout::columns(nu_, nv_, nu_ / 2));
    columns = nu_ / 2;
  }
  plan->bind(stream_, work_);
  column_plan_ = std::move(plan);
  band_.columns = columns;
}

void PlaneFft::columns(float2* grids, bool forward) {
  const std::size_t cells = nu_ * nv_, c = band_.columns;
  for (int i = 0; i < images_; ++i) {
    float2* g = grids + static_cast<std::size_t>(i) * cells;
    exec(*column_plan_, g, forward);
    exec(*column_plan_, g + (nu_ - c), forward);
  }
}

void PlaneFft::rows(float2* grids, bool forward) {
  const std::size_t cells = nu_ * nv_, r = band_.rows;
  for (int i = 0; i < images_; ++i) {
    float2* g = grids + static_cast<std::size_t>(i) * cells;
    exec(*row_plan_, g, forward);
    exec(*row_plan_, g + (nv_ - r) * nu_, forward);
  }
}

void PlaneFft::forward(float2* grids) {
  if (full_) return grids_plan_->forward(grids);
  columns(grids, true);
  rows(grids, true);
}

void PlaneFft::inverse(float2* grids) {
  if (full_) return grids_plan_->inverse(grids);
  rows(grids, false);
  columns(grids, false);
}

}  // namespace gpuclean::imaging::gpu

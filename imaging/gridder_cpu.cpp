#include "imaging/gridder_cpu.hpp"

#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <new>
#include <numbers>
#include <numeric>
#include <stdexcept>

#include "fftw/planner_mutex.hpp"

namespace gpuclean::imaging {
namespace {

using cfloat = std::complex<float>;
using cdouble = std::complex<double>;
constexpr double kTwoPi = 2 * std::numbers::pi;

std::size_t wrap(std::ptrdiff_t i, std::size_t n) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  return static_cast<std::size_t>(((i % m) + m) % m);
}

// Samples in grid units, in the order of their first plane (the order the GPU path sorts to).
struct Prepared {
  std::vector<std::size_t> index;  // position in the caller's arrays
  std::vector<double> ku, kv, kw;
  std::vector<int> first, last;    // planes the sample touches, clipped to the plan
  std::vector<bool> flipped;
};

Prepared prepare(const GridPlan& plan, const Samples& s, bool skip_zero_weight) {
  const double h = 0.5 * plan.kernel.support();
  const int planes = static_cast<int>(plan.planes);
  Prepared p;
  std::vector<std::size_t> order;
  std::vector<int> first_of(s.u.size(), 0);
  for (std::size_t k = 0; k < s.u.size(); ++k) {
    if (skip_zero_weight && s.weight[k] == 0) continue;
    if (plan.wstacking) {
      const double kw = (std::abs(s.w[k]) - plan.w0) / plan.dw;
      // Inside the range the plan was made for, up to the kernel's zero at its edge.
      if (kw < h - 1 - 1e-6 || kw > planes - h + 1e-6)
        throw std::invalid_argument("a sample's w lies outside the range of the grid plan");
      first_of[k] = std::max(0, static_cast<int>(std::ceil(kw - h)));
    }
    order.push_back(k);
  }
  const double su = plan.image.scale * static_cast<double>(plan.nu);
  const double sv = plan.image.scale * static_cast<double>(plan.nv);
  // The GPU path's key (plan §4.4): first plane, then 32×32-cell tile row and column, so both paths
  // sum in the same order.
  const auto tile = [&](std::size_t k) {
    const double sign = plan.wstacking && s.w[k] < 0 ? -1 : 1;
    const auto cell = [](double kc, std::size_t n) { return wrap(static_cast<std::ptrdiff_t>(std::floor(kc)), n) / 32; };
    return std::pair{cell(sign * s.v[k] * sv, plan.nv), cell(-sign * s.u[k] * su, plan.nu)};
  };
  std::vector<std::pair<std::size_t, std::size_t>> tiles(s.u.size());
  for (std::size_t k : order) tiles[k] = tile(k);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return first_of[a] != first_of[b] ? first_of[a] < first_of[b] : tiles[a] < tiles[b];
  });
  for (std::size_t k : order) {
    const bool flip = plan.wstacking && s.w[k] < 0;  // (u, v, w, V) → (−u, −v, −w, V̄): w ≥ 0
    const double sign = flip ? -1 : 1;
    p.index.push_back(k);
    p.flipped.push_back(flip);
    p.ku.push_back(-sign * s.u[k] * su);
    p.kv.push_back(sign * s.v[k] * sv);
    const double kw = plan.wstacking ? (std::abs(s.w[k]) - plan.w0) / plan.dw : 0;
    p.kw.push_back(kw);
    p.first.push_back(first_of[k]);
    p.last.push_back(plan.wstacking ? std::min(planes - 1, static_cast<int>(std::ceil(kw - h)) + plan.kernel.support() - 1)
                                    : 0);
  }
  return p;
}

// The samples that touch plane `plane`: first ∈ [plane − W + 1, plane] and last ≥ plane.
std::pair<std::size_t, std::size_t> plane_range(const Prepared& p, int plane, int support) {
  const auto lo = std::lower_bound(p.first.begin(), p.first.end(), plane - support + 1);
  const auto hi = std::upper_bound(p.first.begin(), p.first.end(), plane);
  return {static_cast<std::size_t>(lo - p.first.begin()), static_cast<std::size_t>(hi - p.first.begin())};
}

// Kernel weights of one sample along u, v (W each) and its first cells.
struct Footprint {
  double fu[16], fv[16];
  std::ptrdiff_t iu0, iv0;
};

Footprint footprint(const GridPlan& plan, double ku, double kv) {
  const int W = plan.kernel.support();
  const double h = 0.5 * W;
  Footprint f;
  f.iu0 = static_cast<std::ptrdiff_t>(std::ceil(ku - h));
  f.iv0 = static_cast<std::ptrdiff_t>(std::ceil(kv - h));
  for (int a = 0; a < W; ++a) {
    f.fu[a] = plan.kernel((static_cast<double>(f.iu0 + a) - ku) / h);
    f.fv[a] = plan.kernel((static_cast<double>(f.iv0 + a) - kv) / h);
  }
  return f;
}

// Per pixel: t = n − 1 + nshift, and the product of the three corrections.
struct Screen {
  std::vector<double> t, correction;
};

Screen screen(const GridPlan& plan) {
  const ImageGeometry& g = plan.image;
  Screen s{std::vector<double>(g.width * g.height), std::vector<double>(g.width * g.height)};
  std::vector<double> cu(g.width), cv(g.height);
  for (std::size_t x = 0; x < g.width; ++x)
    cu[x] = plan.kernel.correction((static_cast<double>(x) - static_cast<double>(g.width / 2)) / plan.nu);
  for (std::size_t y = 0; y < g.height; ++y)
    cv[y] = plan.kernel.correction((static_cast<double>(y) - static_cast<double>(g.height / 2)) / plan.nv);
#pragma omp parallel for
  for (std::size_t y = 0; y < g.height; ++y)
    for (std::size_t x = 0; x < g.width; ++x) {
      const std::size_t i = y * g.width + x;
      s.t[i] = n_minus_one(pixel_l(g, x), pixel_m(g, y)) + plan.nshift;
      s.correction[i] = cu[x] * cv[y] * (plan.wstacking ? plan.kernel.correction(s.t[i] * plan.dw) : 1.0);
    }
  return s;
}

// FFTW's planner is not thread-safe: the program's one planner mutex (fftw/planner_mutex.hpp).
std::mutex& planner_mutex() { return fftw_planner_mutex(); }

// One in-place nu × nv C2C plan ([v][u] row-major), executed on per-thread buffers with the
// new-array interface. FFTW's planner is not thread-safe, so planning is serialised.
class PlaneFft {
 public:
  PlaneFft(const GridPlan& plan, int sign) {
    std::lock_guard lock(planner_mutex());
    cfloat* tmp = alloc(plan.nu * plan.nv);
    auto* t = reinterpret_cast<fftwf_complex*>(tmp);
    plan_ = fftwf_plan_dft_2d(static_cast<int>(plan.nv), static_cast<int>(plan.nu), t, t, sign, FFTW_ESTIMATE);
    fftwf_free(tmp);
    if (!plan_) throw std::runtime_error("FFTW could not plan the gridder's FFT");
  }
  ~PlaneFft() {
    std::lock_guard lock(planner_mutex());
    fftwf_destroy_plan(plan_);
  }
  PlaneFft(const PlaneFft&) = delete;
  PlaneFft& operator=(const PlaneFft&) = delete;

  void run(cfloat* data) const {
    auto* d = reinterpret_cast<fftwf_complex*>(data);
    fftwf_execute_dft(plan_, d, d);
  }
  static cfloat* alloc(std::size_t n) {
    void* p = fftwf_malloc(sizeof(cfloat) * n);
    if (!p) throw std::bad_alloc();
    return static_cast<cfloat*>(p);
  }

 private:
  fftwf_plan plan_;
};

struct FftwBuffer {
  explicit FftwBuffer(std::size_t n) : data(PlaneFft::alloc(n)), size(n) {}
  ~FftwBuffer() { fftwf_free(data); }
  FftwBuffer(const FftwBuffer&) = delete;
  FftwBuffer& operator=(const FftwBuffer&) = delete;
  cfloat* data;
  std::size_t size;
};

int thread_count(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

double plane_weight(const GridPlan& plan, double kw, int plane) {
  return plan.wstacking ? plan.kernel((plane - kw) / (0.5 * plan.kernel.support())) : 1.0;
}

}  // namespace

std::vector<double> invert_cpu(const GridPlan& plan, const Samples& s, int threads) {
  const ImageGeometry& g = plan.image;
  const int W = plan.kernel.support();
  const Prepared p = prepare(plan, s, true);
  // cw·V, conjugated when flipped, × e^{+2πi w nshift} so the plane screens see a symmetric t.
  std::vector<cdouble> value(p.index.size());
  for (std::size_t j = 0; j < value.size(); ++j) {
    const std::size_t k = p.index[j];
    cdouble v(s.vis[k].real(), s.vis[k].imag());
    if (p.flipped[j]) v = std::conj(v);
    if (plan.wstacking) v *= std::polar(1.0, kTwoPi * std::abs(s.w[k]) * plan.nshift);
    value[j] = v * static_cast<double>(s.weight[k]);
  }
  const Screen sc = screen(plan);
  const PlaneFft fft(plan, FFTW_FORWARD);
  std::vector<double> dirty(g.width * g.height, 0.0);
  const std::size_t cells = plan.nu * plan.nv;

#pragma omp parallel num_threads(thread_count(threads))
  {
    FftwBuffer grid(cells);
    std::vector<double> acc(g.width * g.height, 0.0);
#pragma omp for schedule(dynamic)
    for (std::size_t plane = 0; plane < plan.planes; ++plane) {
      const int pl = static_cast<int>(plane);
      const auto [b, e] = plane_range(p, pl, plan.wstacking ? W : 1);
      std::fill(grid.data, grid.data + cells, cfloat(0));
      bool any = false;
      for (std::size_t j = b; j < e; ++j) {
        if (p.last[j] < pl) continue;
        any = true;
        const Footprint f = footprint(plan, p.ku[j], p.kv[j]);
        const cdouble vw = value[j] * plane_weight(plan, p.kw[j], pl);
        for (int bv = 0; bv < W; ++bv) {
          cfloat* row = grid.data + wrap(f.iv0 + bv, plan.nv) * plan.nu;
          const cdouble vv = vw * f.fv[bv];
          for (int a = 0; a < W; ++a) row[wrap(f.iu0 + a, plan.nu)] += cfloat(vv * f.fu[a]);
        }
      }
      if (!any) continue;
      fft.run(grid.data);
      const double wp = plan.w0 + static_cast<double>(plane) * plan.dw;
      for (std::size_t y = 0; y < g.height; ++y) {
        const cfloat* row = grid.data + wrap(static_cast<std::ptrdiff_t>(y) - static_cast<std::ptrdiff_t>(g.height / 2), plan.nv) * plan.nu;
        for (std::size_t x = 0; x < g.width; ++x) {
          const cfloat f = row[wrap(static_cast<std::ptrdiff_t>(x) - static_cast<std::ptrdiff_t>(g.width / 2), plan.nu)];
          const std::size_t i = y * g.width + x;
          if (!plan.wstacking) {
            acc[i] += f.real();
            continue;
          }
          const double turns = wp * sc.t[i];  // Re(F e^{−2πi w_p t})
          const double c = std::cos(kTwoPi * turns), sn = std::sin(kTwoPi * turns);
          acc[i] += f.real() * c + f.imag() * sn;
        }
      }
    }
#pragma omp critical
    for (std::size_t i = 0; i < dirty.size(); ++i) dirty[i] += acc[i];
  }
  for (std::size_t i = 0; i < dirty.size(); ++i) dirty[i] *= sc.correction[i];
  return dirty;
}

std::vector<cdouble> predict_cpu(const GridPlan& plan, std::span<const double> model, const Samples& s,
                                 int threads) {
  const ImageGeometry& g = plan.image;
  if (model.size() != g.width * g.height) throw std::invalid_argument("the model does not have the plan's image size");
  const int W = plan.kernel.support();
  const Prepared p = prepare(plan, s, false);
  const Screen sc = screen(plan);
  std::vector<double> corrected(model.size());
  for (std::size_t i = 0; i < model.size(); ++i) corrected[i] = model[i] * sc.correction[i];
  const PlaneFft fft(plan, FFTW_BACKWARD);
  const std::size_t cells = plan.nu * plan.nv;
  std::vector<cdouble> sorted(p.index.size(), 0.0);

#pragma omp parallel num_threads(thread_count(threads))
  {
    FftwBuffer grid(cells);
    std::vector<cdouble> acc(sorted.size(), 0.0);
#pragma omp for schedule(dynamic)
    for (std::size_t plane = 0; plane < plan.planes; ++plane) {
      const int pl = static_cast<int>(plane);
      const auto [b, e] = plane_range(p, pl, plan.wstacking ? W : 1);
      if (b == e) continue;
      // The adjoint of the inversion's plane: zero-pad M·c·e^{+2πi w_p t}, FFT with e^{+}, gather.
      std::fill(grid.data, grid.data + cells, cfloat(0));
      const double wp = plan.w0 + static_cast<double>(plane) * plan.dw;
      for (std::size_t y = 0; y < g.height; ++y) {
        cfloat* row = grid.data + wrap(static_cast<std::ptrdiff_t>(y) - static_cast<std::ptrdiff_t>(g.height / 2), plan.nv) * plan.nu;
        for (std::size_t x = 0; x < g.width; ++x) {
          const std::size_t i = y * g.width + x;
          const double turns = plan.wstacking ? wp * sc.t[i] : 0.0;
          row[wrap(static_cast<std::ptrdiff_t>(x) - static_cast<std::ptrdiff_t>(g.width / 2), plan.nu)] =
              cfloat(std::polar(corrected[i], kTwoPi * turns));
        }
      }
      fft.run(grid.data);
      for (std::size_t j = b; j < e; ++j) {
        if (p.last[j] < pl) continue;
        const Footprint f = footprint(plan, p.ku[j], p.kv[j]);
        cdouble sum = 0;
        for (int bv = 0; bv < W; ++bv) {
          const cfloat* row = grid.data + wrap(f.iv0 + bv, plan.nv) * plan.nu;
          cdouble r = 0;
          for (int a = 0; a < W; ++a) r += cdouble(row[wrap(f.iu0 + a, plan.nu)]) * f.fu[a];
          sum += r * f.fv[bv];
        }
        acc[j] += sum * plane_weight(plan, p.kw[j], pl);
      }
    }
#pragma omp critical
    for (std::size_t j = 0; j < sorted.size(); ++j) sorted[j] += acc[j];
  }
  std::vector<cdouble> out(s.u.size(), 0.0);
  for (std::size_t j = 0; j < sorted.size(); ++j) {
    const std::size_t k = p.index[j];
    cdouble v = sorted[j];
    if (plan.wstacking) v *= std::polar(1.0, -kTwoPi * std::abs(s.w[k]) * plan.nshift);
    out[k] = p.flipped[j] ? std::conj(v) : v;
  }
  return out;
}

}  // namespace gpuclean::imaging

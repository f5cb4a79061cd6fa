// How far gpuclean's exact beam image is from the one WSClean gets from EveryBeam 0.5 (issue 47):
// EveryBeam's DishGrid evaluates the beam on a coarse grid (-pb-grid-size 32: undersampling factor
// max(min(W/32, H/32), 1)) and FFT-resamples it to the image with a raised-Hann window, divided
// out again after (EveryBeam cpp/griddedresponse/dishgrid.cc, cpp/common/fftresampler.cc). This
// test rebuilds that path (the resampler in double precision, with plain DFTs), compares it with
// power_beam_image, and prints the differences; docs/primary-beam.md quotes them.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>
#include <vector>

#include "beam/beam_image.hpp"

using namespace gpuclean::beam;

namespace {

using cd = std::complex<double>;
constexpr double kArcsec = std::numbers::pi / (180.0 * 3600.0);

/// exp(sign · 2πi · k / n) for k = 0…n−1.
std::vector<cd> twiddles(std::size_t n, double sign) {
  std::vector<cd> t(n);
  for (std::size_t k = 0; k != n; ++k) t[k] = std::polar(1.0, sign * 2.0 * std::numbers::pi * double(k) / double(n));
  return t;
}

/// FFTResampler::RunSingle for upsampling (w_in ≤ w_out, h_in ≤ h_out), without the window: the
/// input's r2c spectrum, the rows −h_in/2 … h_in/2 − 1 and the columns 0 … w_in/2 − 1 (the input's
/// Nyquist column is dropped) copied scaled by 1 / (w_in h_in), then c2r to the output size.
std::vector<double> fft_upsample(const std::vector<double>& in, std::size_t w_in, std::size_t h_in, std::size_t w_out,
                                 std::size_t h_out) {
  const std::size_t kx_in = w_in / 2 + 1;
  // Forward r2c: F[ky][kx] = Σ d[y][x] e^{−2πi (kx x / w + ky y / h)}.
  const std::vector<cd> tw_x = twiddles(w_in, -1), tw_y = twiddles(h_in, -1);
  std::vector<cd> rows(h_in * kx_in);
  for (std::size_t y = 0; y != h_in; ++y)
    for (std::size_t kx = 0; kx != kx_in; ++kx) {
      cd s = 0;
      for (std::size_t x = 0; x != w_in; ++x) s += in[y * w_in + x] * tw_x[(kx * x) % w_in];
      rows[y * kx_in + kx] = s;
    }
  std::vector<cd> f(h_in * kx_in);
  for (std::size_t ky = 0; ky != h_in; ++ky)
    for (std::size_t kx = 0; kx != kx_in; ++kx) {
      cd s = 0;
      for (std::size_t y = 0; y != h_in; ++y) s += rows[y * kx_in + kx] * tw_y[(ky * y) % h_in];
      f[ky * kx_in + kx] = s;
    }
  // The copied spectrum: output row y_new ← input row y_old for y = 0 … h_in − 1.
  const double factor = 1.0 / double(w_in * h_in);
  std::vector<std::size_t> out_rows(h_in);
  std::vector<cd> g(h_in * (w_in / 2));  // [y][kx], kx < w_in / 2
  for (std::size_t y = 0; y != h_in; ++y) {
    std::size_t y_old = y + h_in - h_in / 2, y_new = y + h_out - h_in / 2;
    if (y_old >= h_in) y_old -= h_in;
    if (y_new >= h_out) y_new -= h_out;
    out_rows[y] = y_new;
    for (std::size_t kx = 0; kx != w_in / 2; ++kx) g[y * (w_in / 2) + kx] = f[y_old * kx_in + kx] * factor;
  }
  // c2r: out[y][x] = Re Σ_ky Σ_kx c(kx) G[ky][kx] e^{+2πi (kx x / w_out + ky y / h_out)}, c = 1 at
  // kx = 0 (the output's Nyquist column is empty), 2 elsewhere.
  const std::vector<cd> to_x = twiddles(w_out, +1), to_y = twiddles(h_out, +1);
  std::vector<cd> a(h_in * w_out);
  for (std::size_t y = 0; y != h_in; ++y)
    for (std::size_t x = 0; x != w_out; ++x) {
      cd s = 0;
      for (std::size_t kx = 0; kx != w_in / 2; ++kx)
        s += (kx == 0 ? 1.0 : 2.0) * g[y * (w_in / 2) + kx] * to_x[(kx * x) % w_out];
      a[y * w_out + x] = s;
    }
  std::vector<double> out(w_out * h_out);
  for (std::size_t yo = 0; yo != h_out; ++yo)
    for (std::size_t x = 0; x != w_out; ++x) {
      double s = 0;
      for (std::size_t y = 0; y != h_in; ++y) s += (a[y * w_out + x] * to_y[(out_rows[y] * yo) % h_out]).real();
      out[yo * w_out + x] = s;
    }
  return out;
}

/// FFTResampler with SetWindowFunction(RaisedHann, correct_window = true): the input times the
/// window sin²(π i / n) · 0.99 + 0.01 + 1e-5 along each axis, resampled, divided by the resampled
/// window.
std::vector<double> everybeam_resample(std::vector<double> in, std::size_t w_in, std::size_t h_in, std::size_t w_out,
                                       std::size_t h_out) {
  const auto window = [](std::size_t n, std::size_t i) {
    const double s = std::sin(std::numbers::pi * double(i) / double(n));
    return s * s * 0.99 + 1e-2 + 1e-5;
  };
  std::vector<double> win(w_in * h_in);
  for (std::size_t y = 0; y != h_in; ++y)
    for (std::size_t x = 0; x != w_in; ++x) {
      win[y * w_in + x] = window(w_in, x) * window(h_in, y);
      if (!std::isfinite(in[y * w_in + x])) in[y * w_in + x] = 0;
      in[y * w_in + x] *= win[y * w_in + x];
    }
  std::vector<double> out = fft_upsample(in, w_in, h_in, w_out, h_out);
  const std::vector<double> win_out = fft_upsample(win, w_in, h_in, w_out, h_out);
  for (std::size_t i = 0; i != out.size(); ++i) out[i] /= win_out[i];
  return out;
}

struct Comparison {
  double max_abs_main_lobe = 0;    // |Δ vp²| where the exact vp² > 0.5
  double max_rel_main_lobe = 0;    // |other / exact − 1| there: the error of the -pb flux
  double max_rel_interior = 0;     // the same, vp² > 0.5 and ≥ `border` pixels from the image's edge
  double max_abs_corrected = 0;    // |Δ vp²| where the exact vp² > 0.005 (the -pb image's pixels)
  double max_rel_corrected = 0;
  std::size_t limit_flips = 0;     // pixels on the other side of vp² = 0.005
};

/// WSClean + EveryBeam 0.5's beam for a W × H image: the coarse grid (EveryBeam scales both pixel
/// sizes by W / W_coarse), EveryBeam's geometry and radial table, the voltage in float, then the
/// resampler.
std::vector<double> everybeam_beam(const DishModel& tabulated, const ImageGrid& g, double f_hz, std::size_t pb_grid) {
  const std::size_t factor = std::max<std::size_t>(std::min(g.width / pb_grid, g.height / pb_grid), 1);
  ImageGrid coarse = g;
  coarse.width = g.width / factor;
  coarse.height = g.height / factor;
  coarse.scale_l = g.scale_l * double(g.width) / double(coarse.width);
  coarse.scale_m = g.scale_m * double(g.width) / double(coarse.width);
  BeamImageOptions eb;
  eb.everybeam_geometry = true;
  std::vector<double> pb = power_beam_image(tabulated, coarse, coarse.phase_centre, f_hz, eb);
  for (double& v : pb) {
    const double vp = static_cast<float>(std::sqrt(v));  // EveryBeam's Jones matrices are complex<float>
    v = static_cast<float>(vp * vp);                      // M = conj(A) ⊗ A, resampled as float
  }
  if (factor == 1) return pb;
  return everybeam_resample(pb, coarse.width, coarse.height, g.width, g.height);
}

Comparison compare(const std::vector<double>& exact, const std::vector<double>& other, std::size_t width,
                   std::size_t border) {
  Comparison c;
  const std::size_t height = exact.size() / width;
  for (std::size_t i = 0; i != exact.size(); ++i) {
    const double d = std::fabs(other[i] - exact[i]), rel = d / exact[i];
    const std::size_t x = i % width, y = i / width;
    const bool interior = x >= border && y >= border && x + border < width && y + border < height;
    if (exact[i] > 0.5) {
      c.max_abs_main_lobe = std::max(c.max_abs_main_lobe, d);
      c.max_rel_main_lobe = std::max(c.max_rel_main_lobe, rel);
      if (interior) c.max_rel_interior = std::max(c.max_rel_interior, rel);
    }
    if (exact[i] > 0.005) {
      c.max_abs_corrected = std::max(c.max_abs_corrected, d);
      c.max_rel_corrected = std::max(c.max_rel_corrected, rel);
    }
    if ((exact[i] > 0.005) != (other[i] > 0.005)) ++c.limit_flips;
  }
  return c;
}

struct Case {
  const char* name;
  DishTelescope telescope;
  double f_hz;
  std::size_t size;
  double scale_arcsec;
};

}  // namespace

TEST(PbResampling, CoarseGridAgainstExactEvaluation) {
  // 512² images, so a 32² coarse grid and factor 16. The narrow fields stay inside the main lobe;
  // the wide ones reach past MeerKAT's edge (55.3′ at 1.284 GHz, where EveryBeam's model drops
  // from vp² ≈ 0.14 to 1e-8) or the VLA's null (28.1′ at 1.5 GHz) and edge (35.3′).
  const Case cases[] = {
      {"MeerKAT 1.284 GHz, 512 x 6\" (51')", DishTelescope::kMeerKAT, 1.284e9, 512, 6.0},
      {"MeerKAT 1.284 GHz, 512 x 16\" (137')", DishTelescope::kMeerKAT, 1.284e9, 512, 16.0},
      {"VLA 1.5 GHz, 512 x 3\" (26')", DishTelescope::kVLA, 1.5e9, 512, 3.0},
      {"VLA 1.5 GHz, 512 x 10\" (85')", DishTelescope::kVLA, 1.5e9, 512, 10.0},
  };
  DishOptions tab;
  tab.everybeam_tabulation = true;
  for (const Case& c : cases) {
    ImageGrid g;
    g.width = g.height = c.size;
    g.scale_l = g.scale_m = c.scale_arcsec * kArcsec;
    g.phase_centre = {0.9, -0.6};
    const DishModel exact_model(c.telescope), tabulated(c.telescope, tab);
    const std::vector<double> exact = power_beam_image(exact_model, g, g.phase_centre, c.f_hz);
    BeamImageOptions eb;
    eb.everybeam_geometry = true;
    // EveryBeam's model at full resolution: its geometry (sine radius) and radial table only.
    const std::size_t border = 2 * c.size / 32;  // two coarse pixels
    const Comparison model_only =
        compare(exact, power_beam_image(tabulated, g, g.phase_centre, c.f_hz, eb), c.size, border);
    const Comparison resampled = compare(exact, everybeam_beam(tabulated, g, c.f_hz, 32), c.size, border);
    for (const auto& [what, r] : {std::pair{"EveryBeam model, full grid", model_only},
                                  std::pair{"coarse 32 + FFT resampling", resampled}}) {
      std::printf("%s | %s: PB>0.5: |dPB| %.1e, rel %.1e (interior %.1e); PB>0.005: |dPB| %.1e, rel %.1e; "
                  "flips at 0.005: %zu\n",
                  c.name, what, r.max_abs_main_lobe, r.max_rel_main_lobe, r.max_rel_interior, r.max_abs_corrected,
                  r.max_rel_corrected, r.limit_flips);
    }
    // EveryBeam's table and sine radius alone change the beam by < 1e-3.
    EXPECT_LT(model_only.max_abs_corrected, 1e-3) << c.name;
    // The resampled beam is close in the main lobe; near edges and nulls it is not (printed).
    EXPECT_LT(resampled.max_abs_main_lobe, 0.05) << c.name;
  }
}

TEST(PbResampling, ResamplerReproducesABandLimitedImage) {
  // A check of the resampler itself: a cosine whose frequency is below the coarse grid's Nyquist
  // frequency (and so survives the copy), without a window, is interpolated exactly.
  const std::size_t w = 16, h = 12, W = 64, H = 48;
  std::vector<double> in(w * h);
  const auto f = [](double x, double y, double n_x, double n_y) {
    return 1.0 + 0.5 * std::cos(2 * std::numbers::pi * (3 * x / n_x + 2 * y / n_y) + 0.4);
  };
  for (std::size_t y = 0; y != h; ++y)
    for (std::size_t x = 0; x != w; ++x) in[y * w + x] = f(double(x), double(y), double(w), double(h));
  const std::vector<double> out = fft_upsample(in, w, h, W, H);
  for (std::size_t y = 0; y != H; ++y)
    for (std::size_t x = 0; x != W; ++x) EXPECT_NEAR(out[y * W + x], f(double(x), double(y), double(W), double(H)), 1e-12);
}

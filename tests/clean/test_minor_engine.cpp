// The GPU minor-cycle engine against the CPU minor cycle (MinorCycleCpu), bit for bit: the same
// components in the same order, and the same per-pixel sums in the delta image, on random
// active sets with clusters of every kind the engine has a path for (warp teams; large clusters
// on the row team, in shared memory and beyond it), cycles cut by the budget, a record pool too
// small for the first try, and the one-cluster (sequential) mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>

#include "clean/gpu/minor_engine.hpp"
#include "clean/gpu/team_kernel.hpp"
#include "clean/minor_cycle_cpu.hpp"
#include "select/cuda/device_buffer.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/random_psf.hpp"

namespace gc = gpuclean::clean;
namespace gg = gpuclean::clean::gpu;
using gpuclean::cuda::DeviceBuffer;

namespace {

// A PSF like an interferometer's: symmetric and positive definite (a sum of cosines with
// non-negative weights, the transform of a non-negative uv coverage, times a Gaussian taper: a
// product of positive-definite functions), peak 1, with negative sidelobes.
gc::PreparedPsf realistic_psf(std::size_t size, std::mt19937& rng) {
  gc::PreparedPsf p;
  p.image = gc::HostImage(size, size);
  std::uniform_real_distribution<double> uv(-0.3, 0.3), weight(0.2, 1.0);
  std::vector<std::array<double, 3>> waves(40);
  double total = 0;
  for (auto& w : waves) {
    w = {uv(rng), uv(rng), weight(rng)};
    total += w[2];
  }
  const double c = static_cast<double>(size / 2), taper = static_cast<double>(size) / 6.0;
  for (std::size_t y = 0; y < size; ++y)
    for (std::size_t x = 0; x < size; ++x) {
      const double dx = static_cast<double>(x) - c, dy = static_cast<double>(y) - c;
      double v = 0;
      for (const auto& w : waves) v += w[2] * std::cos(2 * M_PI * (w[0] * dx + w[1] * dy));
      p.image.at(x, y) = static_cast<float>(v / total * std::exp(-(dx * dx + dy * dy) / (2 * taper * taper)));
    }
  p.peak_x = size / 2;
  p.peak_y = size / 2;
  p.image.at(p.peak_x, p.peak_y) = 1.0f;
  return p;
}

std::vector<float> patch_of(const gc::PreparedPsf& psf, int hw) {
  const int side = 2 * hw + 1;
  std::vector<float> patch(static_cast<std::size_t>(side * side), 0.0f);
  for (int dy = -hw; dy <= hw; ++dy)
    for (int dx = -hw; dx <= hw; ++dx) {
      const long px = static_cast<long>(psf.peak_x) + dx, py = static_cast<long>(psf.peak_y) + dy;
      if (px < 0 || py < 0 || px >= static_cast<long>(psf.image.width) || py >= static_cast<long>(psf.image.height))
        continue;
      patch[static_cast<std::size_t>((dy + hw) * side + dx + hw)] =
          psf.image.at(static_cast<std::size_t>(px), static_cast<std::size_t>(py));
    }
  return patch;
}

struct Scene {
  std::size_t w = 0, h = 0;
  std::vector<gc::ActiveMember> members;  // pixel order
};

// Members with random values: for the diverging case only (a dirty image is never like this).
Scene random_scene(std::size_t w, std::size_t h, int clumps, int per_clump, int radius, std::mt19937& rng) {
  Scene s{w, h, {}};
  std::vector<std::uint8_t> used(w * h, 0);
  std::uniform_int_distribution<int> ux(0, static_cast<int>(w) - 1), uy(0, static_cast<int>(h) - 1),
      spread(-radius, radius);
  std::uniform_real_distribution<float> val(0.2f, 3.0f);
  std::bernoulli_distribution negative(0.2), tie(0.05);
  auto add = [&](int x, int y) {
    if (x < 0 || y < 0 || x >= static_cast<int>(w) || y >= static_cast<int>(h)) return;
    if (used[static_cast<std::size_t>(y) * w + static_cast<std::size_t>(x)]++) return;
    float v = tie(rng) ? 1.25f : val(rng);
    if (negative(rng)) v = -v;
    s.members.push_back({x, y, v});
  };
  for (int c = 0; c < clumps; ++c) {
    const int cx = ux(rng), cy = uy(rng);
    for (int i = 0; i < per_clump; ++i) add(cx + spread(rng), cy + spread(rng));
  }
  std::sort(s.members.begin(), s.members.end(), [w](const gc::ActiveMember& a, const gc::ActiveMember& b) {
    return a.y * static_cast<long>(w) + a.x < b.y * static_cast<long>(w) + b.x;
  });
  return s;
}

// A dirty image: point sources convolved with the PSF, as Clark's minor cycle sees one.
class Sky {
 public:
  Sky(std::size_t w, std::size_t h, const gc::PreparedPsf& psf) : w_(w), h_(h), psf_(psf), img_(w * h, 0.0f) {}
  // `count` sources (15% negative, |flux| 0.3 - 3) within `spread` pixels of (cx, cy), or
  // anywhere when spread < 0.
  void add(int count, int cx, int cy, int spread, std::mt19937& rng) {
    std::uniform_int_distribution<int> ux(0, static_cast<int>(w_) - 1), uy(0, static_cast<int>(h_) - 1),
        near(-std::max(spread, 0), std::max(spread, 0));
    std::uniform_real_distribution<float> flux(0.3f, 3.0f);
    std::bernoulli_distribution negative(0.15);
    const int r = static_cast<int>(psf_.image.width / 2);
    for (int s = 0; s < count; ++s) {
      const int sx = spread < 0 ? ux(rng) : cx + near(rng), sy = spread < 0 ? uy(rng) : cy + near(rng);
      const float f = negative(rng) ? -flux(rng) : flux(rng);
      for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
          const int x = sx + dx, y = sy + dy;
          if (x < 0 || y < 0 || x >= static_cast<int>(w_) || y >= static_cast<int>(h_)) continue;
          img_[static_cast<std::size_t>(y) * w_ + static_cast<std::size_t>(x)] +=
              f * psf_.image.at(static_cast<std::size_t>(r + dx), static_cast<std::size_t>(r + dy));
        }
    }
  }
  // The active set: every pixel whose |value| is above `level`, in pixel order.
  Scene active(double level) const {
    Scene s{w_, h_, {}};
    for (std::size_t y = 0; y < h_; ++y)
      for (std::size_t x = 0; x < w_; ++x)
        if (std::abs(img_[y * w_ + x]) > level)
          s.members.push_back({static_cast<int>(x), static_cast<int>(y), img_[y * w_ + x]});
    return s;
  }

 private:
  std::size_t w_, h_;
  const gc::PreparedPsf& psf_;
  std::vector<float> img_;
};

// Bit for bit, except that NaN payloads may differ between the CPU's and the GPU's arithmetic.
bool same_float(float a, float b) { return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b)); }

std::size_t first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_float(a[i], b[i])) return i;
  return a.size();
}

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& h) {
  DeviceBuffer<T> d(std::max<std::size_t>(h.size(), 1), nullptr);
  if (!h.empty()) cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

template <class T>
std::vector<T> download(const T* d, std::size_t n) {
  std::vector<T> h(n);
  if (n) cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

// Runs the engine with the given options and compares its components, delta and model with
// the CPU's, bit for bit.
gc::MinorCycleStats engine_run_matches(const Scene& s, const gc::PreparedPsf& psf, int hw, double limit,
                                       bool abs_key, std::size_t budget, gg::MinorEngineOptions options,
                                       const std::vector<gc::Component>& want) {
  std::vector<float> values;
  std::vector<std::uint32_t> pixels;
  for (const auto& m : s.members) {
    values.push_back(m.value);
    pixels.push_back(static_cast<std::uint32_t>(m.y) * static_cast<std::uint32_t>(s.w) + static_cast<std::uint32_t>(m.x));
  }
  auto d_values = upload(values);
  auto d_pixels = upload(pixels);
  auto d_patch = upload(patch_of(psf, hw));
  DeviceBuffer<std::uint32_t> comp_pixels(budget + 1, nullptr);
  DeviceBuffer<float> comp_fluxes(budget + 1, nullptr), delta(s.w * s.h, nullptr), model(s.w * s.h, nullptr);
  cudaMemset(delta.data(), 0, s.w * s.h * 4);
  cudaMemset(model.data(), 0, s.w * s.h * 4);
  gg::MinorCycleEngine engine(nullptr, s.w, s.h, d_patch.data(), hw, values.size(), budget, options);
  gg::MinorCycleRequest r;
  r.values = d_values.data();
  r.pixels = d_pixels.data();
  r.count = static_cast<std::uint32_t>(values.size());
  r.limit = limit;
  r.gain = 0.1f;
  r.abs_key = abs_key;
  r.budget = static_cast<std::uint32_t>(budget);
  r.comp_pixels = comp_pixels.data();
  r.comp_fluxes = comp_fluxes.data();
  r.delta = delta.data();
  r.model = model.data();
  const std::uint32_t made = engine.run(r);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  EXPECT_EQ(made, want.size());
  const auto got_p = download(comp_pixels.data(), made);
  const auto got_f = download(comp_fluxes.data(), made);
  for (std::size_t i = 0; i < std::min<std::size_t>(made, want.size()); ++i) {
    const std::uint32_t p = want[i].y * static_cast<std::uint32_t>(s.w) + want[i].x;
    EXPECT_EQ(got_p[i], p) << "component " << i;
    EXPECT_TRUE(same_float(got_f[i], want[i].flux)) << "component " << i;
    if (got_p[i] != p) break;
  }
  std::vector<float> want_delta(s.w * s.h, 0.0f);
  for (const auto& c : want) want_delta[c.y * s.w + c.x] += c.flux;
  const auto got_delta = download(delta.data(), s.w * s.h);
  const auto got_model = download(model.data(), s.w * s.h);
  EXPECT_EQ(first_difference(got_delta, want_delta), want_delta.size()) << "delta image";
  EXPECT_EQ(first_difference(got_model, want_delta), want_delta.size()) << "model image";
  return engine.stats();
}

// The CPU's cycle, then the engine's; the engine's statistics.
gc::MinorCycleStats expect_engine_matches_cpu(const Scene& s, const gc::PreparedPsf& psf, int hw, double limit,
                                              bool abs_key, std::size_t budget, gg::MinorEngineOptions options) {
  std::vector<gc::ActiveMember> cpu_members = s.members;
  std::vector<gc::Component> want;
  gc::MinorCycleCpu(psf, static_cast<std::size_t>(hw), s.w, s.w * s.h)
      .run(cpu_members, limit, 0.1, abs_key, budget, &want);
  return engine_run_matches(s, psf, hw, limit, abs_key, budget, options, want);
}

// The box of the largest cluster's members is not known here; the box of all members bounds it.
std::array<int, 2> box_of(const Scene& s) {
  int x0 = 1 << 30, x1 = -1, y0 = 1 << 30, y1 = -1;
  for (const auto& m : s.members) {
    x0 = std::min(x0, m.x);
    x1 = std::max(x1, m.x);
    y0 = std::min(y0, m.y);
    y1 = std::max(y1, m.y);
  }
  return {x1 - x0 + 1, y1 - y0 + 1};
}

using MinorEngine = gpuclean::test::GpuTest;

}  // namespace

TEST_F(MinorEngine, ManySmallClustersOnWarps) {
  std::mt19937 rng(1);
  const auto psf = realistic_psf(41, rng);
  Sky sky(1024, 768, psf);
  sky.add(300, 0, 0, -1, rng);
  const Scene s = sky.active(0.25);
  for (bool abs_key : {true, false}) {
    const auto o = expect_engine_matches_cpu(s, psf, 6, 0.3, abs_key, 100000, {});
    EXPECT_GT(o.clusters, 100u) << "the scene must split into many clusters";
    EXPECT_GT(o.sm_busy_fraction, 0.5);
    EXPECT_EQ(o.sequential, 0u);
  }
}

TEST_F(MinorEngine, BlockClustersInSharedMemoryAndBeyond) {
  std::mt19937 rng(2);
  const auto psf = realistic_psf(41, rng);
  Sky sky(2048, 2048, psf);
  for (int c = 0; c < 12; ++c) sky.add(12, 200 + 150 * c, 300, 12, rng);  // clusters of a few hundred members
  sky.add(1500, 1000, 1300, 90, rng);  // one crowded field: a cluster beyond shared memory
  const Scene s = sky.active(0.05);
  ASSERT_GT(s.members.size(), gg::team_shared_members() + 1000u);
  const auto o = expect_engine_matches_cpu(s, psf, 6, 0.4, true, 200000, {});
  EXPECT_EQ(o.sequential, 0u);
}

TEST_F(MinorEngine, BudgetCutsTheCycleAndThePoolGrows) {
  std::mt19937 rng(3);
  const auto psf = realistic_psf(31, rng);
  Sky sky(512, 512, psf);
  sky.add(120, 0, 0, -1, rng);
  const Scene s = sky.active(0.2);
  for (std::size_t budget : {1u, 31u, 32u, 33u, 500u}) {
    gg::MinorEngineOptions tiny;
    tiny.initial_pool = 64;  // far too small: the clusters' records must make the pool grow
    const auto o = expect_engine_matches_cpu(s, psf, 4, 0.25, true, budget, tiny);
    if (budget >= 32) {
      EXPECT_GT(o.reruns, 0u) << "budget " << budget;
    }
  }
}

// A cycle cut by the budget: the clusters run side by side and the merge keeps the records of
// highest order, so a long chain must stop once the budget's worth of better records exists
// (budget_cutoff.cuh) rather than run down to the limit. One crowded blob makes the long chain
// and scattered sources the short ones; the budget keeps about a third of the blob's chain.
TEST_F(MinorEngine, BudgetCutoffStopsTheLongChainEarly) {
  std::mt19937 rng(8);
  const auto psf = realistic_psf(31, rng);
  Sky sky(1024, 1024, psf);
  sky.add(150, 512, 512, 40, rng);
  sky.add(200, 0, 0, -1, rng);
  const Scene s = sky.active(0.2);
  const double limit = 0.3;
  const int hw = 6;
  std::vector<gc::ActiveMember> all = s.members;
  std::vector<gc::Component> uncut;
  gc::MinorCycleCpu(psf, hw, s.w, s.w * s.h).run(all, limit, 0.1, true, 1u << 30, &uncut);
  const auto in_blob = [](const gc::Component& c) { return c.x + 80 >= 512 && c.x <= 592 && c.y + 80 >= 512 && c.y <= 592; };
  const auto blob = static_cast<std::size_t>(std::count_if(uncut.begin(), uncut.end(), in_blob));
  ASSERT_GT(blob, 2000u) << "the blob must make a long chain";
  std::size_t budget = 0, kept = 0;
  while (kept < blob / 3) kept += in_blob(uncut[budget++]) ? 1 : 0;
  ASSERT_LT(budget, uncut.size() * 9 / 10) << "the budget must cut the cycle";

  const auto o = expect_engine_matches_cpu(s, psf, hw, limit, true, budget, {});
  EXPECT_GE(o.longest_chain, kept);
  EXPECT_LT(o.longest_chain, (kept + blob) / 2) << "the blob's chain ran on past the budget";
}

TEST_F(MinorEngine, OneClusterModeIsTheSequentialOrder) {
  std::mt19937 rng(4);
  const auto psf = realistic_psf(41, rng);
  Sky sky(700, 500, psf);
  sky.add(100, 0, 0, -1, rng);
  const Scene s = sky.active(0.2);
  gg::MinorEngineOptions one;
  one.clustered = false;
  const auto o = expect_engine_matches_cpu(s, psf, 5, 0.3, true, 100000, one);
  EXPECT_EQ(o.clusters, 1u);
}

TEST_F(MinorEngine, PatchCoversTheWholeSetOfATinyImage) {
  std::mt19937 rng(5);
  const auto psf = realistic_psf(101, rng);
  Sky sky(64, 64, psf);
  sky.add(30, 32, 32, 25, rng);
  expect_engine_matches_cpu(sky.active(0.1), psf, 50, 0.2, true, 100000, {});
}

TEST_F(MinorEngine, DivergingValuesReachNaNAndStillMatch) {
  std::mt19937 rng(6);
  // Sidelobes up to 0.55: members grow without bound and reach Inf and NaN; the engine must still
  // follow the CPU (which never picks a NaN), component for component.
  const auto psf = gpuclean::test::uniform_random_psf(31, -0.2f, 0.55f, rng);
  const Scene s = random_scene(300, 300, 30, 30, 5, rng);
  for (bool clustered : {true, false}) {
    gg::MinorEngineOptions o;
    o.clustered = clustered;
    expect_engine_matches_cpu(s, psf, 6, 0.3, true, 20000, o);
  }
}

// Small enough for compute-sanitizer's racecheck: warp teams and a block team in shared memory
// in one launch (the global-memory block path is in BlockClustersInSharedMemoryAndBeyond).
TEST_F(MinorEngine, SmallSceneForSanitizers) {
  std::mt19937 rng(7);
  const auto psf = realistic_psf(31, rng);
  Sky sky(400, 400, psf);
  sky.add(25, 0, 0, -1, rng);
  sky.add(15, 200, 200, 8, rng);  // one cluster of a few hundred members: a block team
  const auto o = expect_engine_matches_cpu(sky.active(0.2), psf, 5, 0.3, true, 3000, {});
  EXPECT_GT(o.clusters, 10u);
}

// The production geometry: a 101-pixel patch (hw 50) and an extended source of several thousand
// members (the bench's fields make such clusters), then a lower level that merges the field into
// a 21 000-member cluster of 720 x 820 pixels, a hundred members and more in a 64-pixel square.
// Both key kinds.
TEST_F(MinorEngine, ExtendedSourceAtTheProductionPatch) {
  std::mt19937 rng(9);
  const auto psf = realistic_psf(101, rng);
  Sky sky(1024, 1024, psf);
  sky.add(300, 512, 512, 50, rng);
  sky.add(150, 0, 0, -1, rng);
  for (double level : {0.5, 0.3}) {
    SCOPED_TRACE(level);
    const Scene s = sky.active(level);
    ASSERT_GT(s.members.size(), 9000u);
    for (bool abs_key : {true, false}) {
      const auto o = expect_engine_matches_cpu(s, psf, 50, level + 0.1, abs_key, 100000, {});
      EXPECT_GT(o.widest_cluster, 9000u);
      EXPECT_GT(o.longest_chain, 500u);
    }
  }
}

// Ties everywhere: the values quantized to eighths, so that many members share a key; the row
// team must take the lowest pixel among them, whichever thread holds it.
TEST_F(MinorEngine, TiesBreakByPixelOrder) {
  std::mt19937 rng(13);
  const auto psf = realistic_psf(101, rng);
  Sky sky(768, 768, psf);
  sky.add(200, 384, 384, 60, rng);
  Scene s = sky.active(0.4);
  for (auto& m : s.members) m.value = std::round(m.value * 8.0f) / 8.0f;
  std::size_t ties = 0;
  for (std::size_t i = 1; i < s.members.size(); ++i) ties += s.members[i].value == s.members[i - 1].value ? 1 : 0;
  ASSERT_GT(ties, s.members.size() / 20);
  expect_engine_matches_cpu(s, psf, 50, 0.45, true, 100000, {});
}

// A long, thin cluster (a chain of sources across an 8192-pixel strip): few members in each of
// its many rows' patch windows.
TEST_F(MinorEngine, LongThinCluster) {
  std::mt19937 rng(10);
  const auto psf = realistic_psf(101, rng);
  Sky sky(8192, 256, psf);
  for (int k = 0; k < 300; ++k) sky.add(1, 20 + k * 27, 128, 20, rng);
  const Scene s = sky.active(0.35);
  ASSERT_GT(box_of(s)[0], 2048);
  const auto o = expect_engine_matches_cpu(s, psf, 50, 0.45, true, 100000, {});
  EXPECT_GT(o.widest_cluster, 5000u);
}

// A chain of sources along the diagonal of a 6000 x 6000 image: one cluster whose box spans the
// image, in shared memory at a high level (9 000 members) and beyond it at a low one (37 000).
TEST_F(MinorEngine, ClusterAcrossTheImageInSharedMemoryAndBeyond) {
  std::mt19937 rng(12);
  const auto psf = realistic_psf(101, rng);
  Sky sky(6000, 6000, psf);
  for (int k = 0; k < 290; ++k) sky.add(1, 60 + k * 20, 60 + k * 20, 3, rng);
  {
    const Scene s = sky.active(0.5);
    ASSERT_GT(box_of(s)[0], 5000);
    ASSERT_LT(s.members.size(), gg::team_shared_members());
    const auto o = expect_engine_matches_cpu(s, psf, 50, 0.6, true, 100000, {});
    EXPECT_GT(o.widest_cluster, 5000u) << "the chain must make one large cluster";
  }
  {
    const Scene s = sky.active(0.3);
    ASSERT_GT(s.members.size(), gg::team_shared_members());
    const auto o = expect_engine_matches_cpu(s, psf, 50, 0.4, true, 100000, {});
    EXPECT_GT(o.widest_cluster, gg::team_shared_members());
  }
}

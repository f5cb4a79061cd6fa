// The device-memory estimate (clean/gpu_memory.hpp) is a per-algorithm answer: every algorithm
// shares the run's part (images, selection, scales, spectra) and adds what its own steps hold,
// as the factory's table names it; joined planes add their planes, fewer when streamed.
#include <gtest/gtest.h>

#include "clean/gpu/algorithm_memory.hpp"
#include "clean/gpu_memory.hpp"
#include "clean/scale_set.hpp"
#include "tests/support/gpu_test.hpp"

namespace gc = gpuclean::clean;

namespace {

using GpuMemory = gpuclean::test::GpuTest;

gc::CleanSettings settings_for(gc::Algorithm algorithm) {
  gc::CleanSettings s;
  s.algorithm = algorithm;
  s.niter = 10000;
  return s;
}

const gc::RunShape kShape{.width = 1024, .height = 1024, .psf_width = 1024, .psf_height = 1024};

}  // namespace

TEST_F(GpuMemory, EachAlgorithmAddsItsOwnPartToTheRunsShare) {
  const gc::CleanSettings clark = settings_for(gc::Algorithm::kClark), hogbom = settings_for(gc::Algorithm::kHogbom);
  const std::vector<gc::CleanScale> scales = gc::plan_scales(clark, 1.0, 1024, 1024, 1024);
  const std::size_t own = gc::gpu::clark_gpu_bytes(kShape, clark, scales);
  EXPECT_GT(own, 0u);
  EXPECT_EQ(gc::gpu::hogbom_gpu_bytes(kShape, hogbom, scales), 0u);
  EXPECT_EQ(gc::gpu_bytes_needed(kShape, clark) - gc::gpu_bytes_needed(kShape, hogbom), own);
  EXPECT_EQ(gc::gpu::gpu_bytes_of(gc::Algorithm::kClark), &gc::gpu::clark_gpu_bytes);
  EXPECT_EQ(gc::gpu::gpu_bytes_of(gc::Algorithm::kHogbom), &gc::gpu::hogbom_gpu_bytes);
  // A worker of a batch keeps its caches' spectra and plans on top.
  EXPECT_GT(gc::gpu_bytes_per_worker(kShape, clark), gc::gpu_bytes_needed(kShape, clark));
}

TEST_F(GpuMemory, JoinedPlanesAddTheirPlanesFewerWhenStreamed) {
  const gc::CleanSettings s = settings_for(gc::Algorithm::kClark);
  gc::RunShape joined = kShape;
  joined.planes = 8;
  const std::size_t one = gc::gpu_bytes_needed(kShape, s), all = gc::gpu_bytes_needed(joined, s);
  EXPECT_GT(all, one + 8 * 3 * 1024 * 1024 * sizeof(float));  // at least each plane's three images
  joined.device_planes = 2;
  const std::size_t streamed = gc::gpu_bytes_needed(joined, s);
  EXPECT_LT(streamed, all);
  EXPECT_GT(streamed, one);
}

// The one-block bitonic sort (SampleSelect's recursion base) against std::sort, at every padding
// case near powers of two and on duplicate-heavy composites.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "select/cuda/device_buffer.hpp"
#include "select/detail/bitonic_sort.hpp"
#include "tests/support/gpu_test.hpp"

namespace gpuclean {
namespace {

using BitonicSort = test::GpuTest;

std::vector<std::uint64_t> sort_on_device(const std::vector<std::uint64_t>& h) {
  cuda::DeviceBuffer<std::uint64_t> in(h.size(), nullptr), out(h.size(), nullptr);
  GPUCLEAN_CUDA_TRY(cudaMemcpy(in.data(), h.data(), h.size() * 8, cudaMemcpyHostToDevice));
  select::detail::bitonic_sort_u64(nullptr, in.data(), out.data(), h.size());
  std::vector<std::uint64_t> r(h.size());
  GPUCLEAN_CUDA_TRY(cudaMemcpy(r.data(), out.data(), r.size() * 8, cudaMemcpyDeviceToHost));
  return r;
}

TEST_F(BitonicSort, MatchesStdSortAtEverySizeClass) {
  std::mt19937_64 rng(7);
  for (std::size_t n : {1u, 2u, 3u, 31u, 32u, 33u, 1000u, 2047u, 2048u, 2049u, 4095u, 4096u}) {
    for (std::uint64_t distinct : {std::uint64_t{3}, ~std::uint64_t{0}}) {
      std::vector<std::uint64_t> h(n);
      for (auto& x : h) x = distinct == 3 ? (rng() % 3) << 32 : rng();
      if (n > 1) h[n / 2] = ~std::uint64_t{0};  // the padding value itself must sort correctly
      std::vector<std::uint64_t> want = h;
      std::sort(want.begin(), want.end());
      EXPECT_EQ(sort_on_device(h), want) << "n = " << n;
    }
  }
}

TEST_F(BitonicSort, RefusesMoreThanOneBlockHolds) {
  EXPECT_THROW(select::detail::bitonic_sort_u64(nullptr, nullptr, nullptr, select::detail::kBitonicMax + 1),
               std::logic_error);
}

}  // namespace
}  // namespace gpuclean

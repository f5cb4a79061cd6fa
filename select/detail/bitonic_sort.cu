// SampleSelect's recursion base (Ribizel & Anzt 2019, section 4): a bitonic sort of a small
// bucket in the shared memory of one block. Below a few thousand elements this beats a device
// radix sort, whose several launches cost more than the sort itself.

#include "select/cuda/cuda_check.hpp"
#include "select/detail/bitonic_sort.hpp"

namespace gpuclean::select::detail {
namespace {

__global__ void __launch_bounds__(1024) bitonic_sort_kernel(const std::uint64_t* in, std::uint64_t* out,
                                                            unsigned count, unsigned padded) {
  __shared__ std::uint64_t s[kBitonicMax];
  // Padding with the largest composite sorts it past every real element.
  for (unsigned i = threadIdx.x; i < padded; i += blockDim.x) s[i] = i < count ? in[i] : ~0ull;
  __syncthreads();
  for (unsigned size = 2; size <= padded; size <<= 1) {
    for (unsigned stride = size >> 1; stride > 0; stride >>= 1) {
      for (unsigned t = threadIdx.x; t < padded / 2; t += blockDim.x) {
        const unsigned lo = 2 * t - (t & (stride - 1));
        const unsigned hi = lo + stride;
        const bool ascending = (lo & size) == 0;
        const std::uint64_t a = s[lo], b = s[hi];
        if ((a > b) == ascending) {
          s[lo] = b;
          s[hi] = a;
        }
      }
      __syncthreads();
    }
  }
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) out[i] = s[i];
}

}  // namespace

void bitonic_sort_u64(cudaStream_t stream, const std::uint64_t* in, std::uint64_t* out, std::size_t count) {
  if (count == 0) return;
  if (count > kBitonicMax) throw std::logic_error("bitonic_sort_u64: more elements than one block sorts");
  unsigned padded = 2;
  while (padded < count) padded <<= 1;
  const unsigned threads = padded / 2 < 1024 ? (padded / 2 + 31) / 32 * 32 : 1024;
  bitonic_sort_kernel<<<1, threads, 0, stream>>>(in, out, static_cast<unsigned>(count), padded);
  GPUCLEAN_CUDA_TRY(cudaGetLastError());
}

}  // namespace gpuclean::select::detail

#pragma once
// One-block bitonic sort of (key, index) composites, the recursion base of SampleSelect.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace gpuclean::select::detail {

/// The most elements one block sorts (32 KiB of shared memory).
inline constexpr std::size_t kBitonicMax = 4096;

/// Ascending sort of count <= kBitonicMax composites, out of place; needs no scratch.
void bitonic_sort_u64(cudaStream_t stream, const std::uint64_t* in, std::uint64_t* out, std::size_t count);

}  // namespace gpuclean::select::detail

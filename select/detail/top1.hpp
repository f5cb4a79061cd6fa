#pragma once
// The k = 1 top-k in one read of the input: the element with the best rank key, the lowest index
// among equal keys, NaN never (the library's contract, selector.hpp). No sample, window or pass
// count: a reduction of (key, index) composites, as torch.topk with k = 1 is a max.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "select/detail/rank_key.hpp"
#include "select/detail/window_select.hpp"

namespace gpuclean::select::detail {

/// Device scratch a call takes.
inline constexpr std::size_t kTop1ScratchBytes = sizeof(unsigned long long);

/// Writes the best element of in[0, n) (n < 2^32) to out_value[0] and its index to out_index[0],
/// and to `result` (mapped host memory) kWindowOk with count 1, or count 0 when every element is
/// NaN. `scratch`: kTop1ScratchBytes of device memory. Asynchronous on `stream`.
void launch_top1(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, unsigned long long* scratch,
                 float* out_value, std::uint32_t* out_index, WindowResult* result);

}  // namespace gpuclean::select::detail

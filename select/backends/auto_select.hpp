#pragma once
// The `auto` backend: a dispatcher that forwards each call to the exact backend its rule
// (auto_rule.hpp) picks for the operation, n, k and, at large n, the data class of a small
// sample. It is what the library offers by default; the backends themselves stay selectable.

#include <cstddef>
#include <memory>
#include <string_view>

#include "select/backends/auto_rule.hpp"
#include "select/selector.hpp"

namespace gpuclean::select {

std::unique_ptr<Selector> make_auto_selector();

/// The data class of d_in[0, n) under `order`'s keys, from kLookSamples keys drawn at random
/// positions: one launch, one small copy, one synchronization of `stream`. Scratch from `ws`.
DataClass sample_data_class(cudaStream_t stream, const float* d_in, std::size_t n, Order order, Workspace& ws);

/// The backend `auto` forwards this call to (k: top-k's k, or the number of ranks). Looks at the
/// data, as the call itself does, only when auto_needs_look.
std::string_view auto_backend_for(cudaStream_t stream, const float* d_in, std::size_t n, AutoOperation op,
                                  std::size_t k, Order order, Workspace& ws);

}  // namespace gpuclean::select

// The randomized backend's device chain, host side: lays out a chain's buffers, launches it
// (detail/window_select.hpp) and reads its result back after the one synchronization.

#include <optional>

#include "select/backends/randomized_selector.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/detail/arena.hpp"
#include "select/detail/engine.hpp"
#include "select/detail/robust_fused.hpp"
#include "select/detail/top1.hpp"
#include "select/detail/window_select.hpp"

namespace gpuclean::select::detail {
namespace {

struct ChainBuffers {
  WindowPlan* plan = nullptr;
  WindowCounters* counters = nullptr;
  unsigned long long* chunk_ties = nullptr;
  std::uint64_t *cand = nullptr, *buf_a = nullptr, *buf_b = nullptr, *sorted = nullptr;
  std::uint32_t* tiles = nullptr;
  void* sort_temp = nullptr;
  std::size_t sort_temp_bytes = 0;
};

ChainBuffers take_chain(Arena& a, std::size_t n, std::size_t k, std::size_t cap_b, bool ties, bool sorted) {
  ChainBuffers b;
  b.plan = a.take<WindowPlan>(1);
  b.counters = a.take<WindowCounters>(1);
  b.cand = a.take<std::uint64_t>(kWindowMaxCandidates);
  b.buf_a = a.take<std::uint64_t>(k);
  b.buf_b = a.take<std::uint64_t>(cap_b);
  if (ties) {
    b.tiles = a.take<std::uint32_t>(window_tiles(n));
    b.chunk_ties = a.take<unsigned long long>(window_chunks(n));
  }
  if (sorted) {
    b.sorted = a.take<std::uint64_t>(k);
    b.sort_temp_bytes = sort_temp_bytes_u64(k);
    b.sort_temp = a.take<std::byte>(b.sort_temp_bytes);
  }
  return b;
}

// Mapped pinned memory for a chain's result, one per host thread: a call writes and reads it
// after its one synchronization, and a thread makes one call at a time.
struct MappedResults {
  WindowResult* host = nullptr;
  WindowResult* device = nullptr;
};

MappedResults mapped_results() {
  struct Holder {
    MappedResults r;
    ~Holder() {
      if (r.host) GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeHost(r.host));
    }
  };
  thread_local Holder h;
  if (!h.r.host) {
    void* p = nullptr;
    GPUCLEAN_CUDA_TRY(cudaHostAlloc(&p, sizeof(WindowResult), cudaHostAllocMapped | cudaHostAllocPortable));
    void* d = nullptr;
    const cudaError_t err = cudaHostGetDevicePointer(&d, p, 0);
    if (err != cudaSuccess) GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeHost(p));
    GPUCLEAN_CUDA_TRY(err);
    h.r.host = static_cast<WindowResult*>(p);
    h.r.device = static_cast<WindowResult*>(d);
  }
  h.r.host->status = kWindowNotRun;
  return h.r;
}

WindowResult read_result(const WindowResult* r) {
  const volatile WindowResult* v = r;
  WindowResult out;
  out.status = v->status;
  out.count = v->count;
  return out;
}

// A chain over in[0, n): its buffers taken from `arena`, its result in this thread's mapped
// memory; the caller sets the key, k and the window.
struct ChainCall {
  ChainBuffers b;
  MappedResults mr;
  WindowChain c;
};

ChainCall start_chain(Arena& arena, const float* in, std::size_t n, std::size_t k, std::size_t cap_b, bool ties,
                      bool sorted) {
  ChainCall call;
  call.b = take_chain(arena, n, k, cap_b, ties, sorted);
  call.mr = mapped_results();
  WindowChain& c = call.c;
  c.in = in;
  c.n = n;
  c.plan = call.b.plan;
  c.counters = call.b.counters;
  c.buf_a = call.b.buf_a;
  c.buf_b = call.b.buf_b;
  c.cap_b = cap_b;
  c.candidates = call.b.cand;
  c.tile_ties = call.b.tiles;
  c.chunk_ties = call.b.chunk_ties;
  c.result = call.mr.device;
  return call;
}

}  // namespace

std::size_t RandomizedSelector::chain_top_k_bytes(std::size_t n, std::size_t k, bool sorted) const {
  const std::size_t s = chain_samples(n, t_);
  const ChainWindow w = chain_window(n, k, s, t_.p_k, t_.capacity_factor);
  Arena a;
  take_chain(a, n, k, w.cap_b, true, sorted);
  return a.used();
}

std::optional<SelectStats> RandomizedSelector::chain_top_k(cudaStream_t stream, const float* d_in, std::size_t n,
                                                           std::size_t k, const SelectRequest& req, Workspace& ws,
                                                           float* d_out_values, std::uint32_t* d_out_indices) const {
  if (k == 1) {  // one read, a reduction: no sample, no window (detail/top1.hpp)
    if (ws.capacity() < kTop1ScratchBytes) ws.reserve(top_k_workspace_bytes(n, k));
    Arena arena = arena_for(ws, kTop1ScratchBytes);
    unsigned long long* best = arena.take<unsigned long long>(1);
    const MappedResults mr = mapped_results();
    launch_top1(stream, d_in, n, key_mode(req.order), best, d_out_values, d_out_indices, mr.device);
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
    SelectStats st;
    st.count = static_cast<std::size_t>(read_result(mr.host).count);
    st.passes = 1;
    st.scratch_bytes = kTop1ScratchBytes;
    return st;
  }
  const std::size_t s = chain_samples(n, t_);
  const ChainWindow w = chain_window(n, k, s, t_.p_k, t_.capacity_factor);
  Arena sizing;
  take_chain(sizing, n, k, w.cap_b, true, req.sorted_output);
  // Room for the chain and its fallbacks at once, so that a loop grows the workspace once; the
  // full size (CUB's temp-size queries) is computed only while the workspace is too small.
  if (ws.capacity() < sizing.used()) ws.reserve(top_k_workspace_bytes(n, k));
  const std::size_t bytes = sizing.used();
  Arena arena = arena_for(ws, bytes);
  ChainCall call = start_chain(arena, d_in, n, k, w.cap_b, true, req.sorted_output);
  const ChainBuffers& b = call.b;
  WindowChain& c = call.c;
  c.key = window_key_of(key_mode(req.order));
  c.k = k;
  c.samples = static_cast<int>(s);
  c.seed = t_.seed;
  c.first = w.first;
  c.centre = w.centre;
  c.last = w.last;
  c.out_values = d_out_values;
  c.out_indices = d_out_indices;
  c.sorted = req.sorted_output;
  run_window_chain(stream, c);
  if (req.sorted_output) {
    sort_u64(stream, b.sort_temp, b.sort_temp_bytes, b.buf_a, b.sorted, k);
    write_sorted_window(stream, d_in, b.sorted, k, b.counters, d_out_values, d_out_indices);
  }
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  const WindowResult r = read_result(call.mr.host);
  if (r.status != kWindowOk) return std::nullopt;
  SelectStats st;
  st.count = static_cast<std::size_t>(r.count);
  st.passes = 1;
  st.scratch_bytes = bytes;
  return st;
}

// The fused estimate (detail/robust_fused.hpp): one read of the input, both brackets from one
// sample. Falls back to the default (two order-statistics calls over a finite copy) when a
// bracket misses.
RobustStats RandomizedSelector::robust_statistics(cudaStream_t stream, const float* d_in, std::size_t n,
                                                  Workspace& ws, SelectStats* stats) const {
  if (stats) *stats = SelectStats{};
  if (!chain_applies(n, 1)) return Selector::robust_statistics(stream, d_in, n, ws, stats);
  SelectStats fused;
  if (const auto r = fused_robust_statistics(stream, d_in, n, ws, robust_z(), t_.seed, &fused)) {
    if (stats) *stats = fused;
    return *r;
  }
  SelectStats inner;
  const RobustStats r = Selector::robust_statistics(stream, d_in, n, ws, &inner);
  if (stats) *stats = after_fallback(inner, fused.passes, fused.scratch_bytes);
  return r;
}

}  // namespace gpuclean::select::detail

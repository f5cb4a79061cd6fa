// The host-driven flow's shared steps (see host_flow.hpp).

#include "select/detail/host_flow.hpp"

#include <algorithm>
#include <limits>

#include "select/cuda/cuda_check.hpp"

namespace gpuclean::select::detail {

void take_pass_buffers(Arena& a, FilterBuffers& f, std::size_t max_bounds, bool regions) {
  f.bounds = a.take<std::uint32_t>(max_bounds);
  if (regions) f.regions = a.take<std::uint8_t>(max_bounds + 1);
  f.counts = a.take<unsigned long long>(max_bounds + 1);
  f.fill = a.take<unsigned long long>(2);
}

void take_b_buffers(Arena& a, FilterBuffers& f, std::size_t cap_b) {
  f.cap_b = cap_b;
  f.buf_b = a.take<std::uint64_t>(cap_b);
  f.sorted_b = a.take<std::uint64_t>(cap_b);
  f.b_temp_bytes = sort_temp_bytes_u64(cap_b);
  f.b_temp = a.take<std::byte>(f.b_temp_bytes);
}

void take_ab_buffers(Arena& a, FilterBuffers& f, std::size_t k, std::size_t cap_b) {
  f.buf_a = a.take<std::uint64_t>(k);
  take_b_buffers(a, f, cap_b);
  f.final_sorted = a.take<std::uint64_t>(k);
  f.final_temp_bytes = sort_temp_bytes_u64(k);
  f.final_temp = a.take<std::byte>(f.final_temp_bytes);
}

void take_scratch(Arena& a, FilterBuffers& f, std::size_t bytes) {
  f.scratch_bytes = bytes;
  f.scratch = a.take<std::byte>(bytes);
}

SegmentPass filter_pass(const FilterBuffers& f, const float* in, std::size_t n, KeyMode mode,
                        unsigned long long cap_a) {
  SegmentPass s;
  s.in = in;
  s.n = n;
  s.mode = mode;
  s.counts = f.counts;
  s.buf_a = f.buf_a;
  s.cap_a = cap_a;
  s.buf_b = f.buf_b;
  s.cap_b = f.cap_b;
  s.fill = f.fill;
  return s;
}

std::vector<unsigned long long> read_counts(cudaStream_t stream, const unsigned long long* d_counts,
                                            std::size_t count) {
  std::vector<unsigned long long> c(count);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(c.data(), d_counts, sizeof(unsigned long long) * count, cudaMemcpyDeviceToHost,
                                    stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  return c;
}

std::vector<unsigned long long> run_segment_pass(cudaStream_t stream, const SegmentPass& pass, std::size_t count,
                                                 SelectStats& stats) {
  segment_pass(stream, pass);
  ++stats.passes;
  return read_counts(stream, pass.counts, count);
}

void exact_top_k(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode, std::size_t k,
                 std::optional<Threshold> known, const FilterBuffers& f, SelectStats& stats) {
  Arena scratch(f.scratch, f.scratch_bytes);
  if (!known) {
    known = radix_threshold(stream, in, n, mode, k, scratch);
    stats.passes += 3;
  }
  extract_with_threshold(stream, in, n, mode, *known, k, f.buf_a, scratch);
  stats.passes += 2;
}

std::uint32_t exact_rank_key(cudaStream_t stream, const float* in, std::size_t n, KeyMode mode,
                             unsigned long long k, const FilterBuffers& f, SelectStats& stats) {
  Arena scratch(f.scratch, f.scratch_bytes);
  const std::uint32_t key = radix_threshold(stream, in, n, mode, k, scratch).key;
  stats.passes += 3;
  return key;
}

std::vector<std::uint32_t> keys_at(cudaStream_t stream, const void* sorted, bool composites,
                                   const std::vector<unsigned long long>& pos, std::byte* scratch) {
  std::vector<std::uint32_t> keys(pos.size());
  if (pos.empty()) return keys;
  auto* d_pos = reinterpret_cast<unsigned long long*>(scratch);
  auto* d_keys = reinterpret_cast<std::uint32_t*>(scratch + pos.size() * sizeof(unsigned long long));
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_pos, pos.data(), pos.size() * 8, cudaMemcpyHostToDevice, stream));
  gather_keys(stream, sorted, composites, d_pos, pos.size(), d_keys);
  GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(keys.data(), d_keys, keys.size() * 4, cudaMemcpyDeviceToHost, stream));
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
  return keys;
}

void write_selection(cudaStream_t stream, const float* in, const FilterBuffers& f, std::size_t na,
                     const std::uint64_t* b, std::size_t nb, bool sorted, float* out_values,
                     std::uint32_t* out_indices) {
  if (sorted) {
    if (nb) GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(f.buf_a + na, b, nb * 8, cudaMemcpyDeviceToDevice, stream));
    sort_u64(stream, f.final_temp, f.final_temp_bytes, f.buf_a, f.final_sorted, na + nb);
    write_top_k(stream, in, f.final_sorted, na + nb, nullptr, 0, out_values, out_indices);
  } else {
    write_top_k(stream, in, f.buf_a, na, b, nb, out_values, out_indices);
  }
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream));
}

bool start_order_statistics(std::size_t n, const std::vector<std::size_t>& ranks, float* h_out) {
  std::fill(h_out, h_out + ranks.size(), std::numeric_limits<float>::quiet_NaN());
  return n > 0 && !ranks.empty();
}

}  // namespace gpuclean::select::detail

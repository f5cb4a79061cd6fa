#include "imaging/gpu/sample_order.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpuclean::imaging::gpu {

int plane_support(const GridPlan& plan) { return plan.wstacking ? plan.kernel.support() : 1; }

int first_plane(const GridPlan& plan, double w) {
  if (!plan.wstacking) return 0;
  const double h = 0.5 * plan.kernel.support();
  const double kw = (std::abs(w) - plan.w0) / plan.dw;
  // invert_cpu's bounds: inside the plan's range, up to the kernel's zero at its edge.
  if (!(kw >= h - 1 - 1e-6 && kw <= static_cast<double>(plan.planes) - h + 1e-6))
    throw std::invalid_argument("a sample's w lies outside the range of the grid plan");
  return std::max(0, static_cast<int>(std::ceil(kw - h)));
}

int SampleOrder::first_plane_at(std::size_t position) const {
  const auto it = std::upper_bound(plane_offset.begin(), plane_offset.end(), position);
  return static_cast<int>(it - plane_offset.begin()) - 1;
}

SampleOrder order_by_first_plane(const GridPlan& plan, std::span<const double> w, std::span<const float> weight) {
  const std::size_t n = w.size(), planes = plan.wstacking ? plan.planes : 1;
  if (!weight.empty() && weight.size() != n) throw std::invalid_argument("w and weight differ in length");
  const auto used = [&](std::size_t k) { return weight.empty() || weight[k] != 0; };
  // Stable counting sort: each thread counts, then places, one contiguous block of samples.
  const int threads = static_cast<int>(std::clamp<std::size_t>(n / 65536, 1, static_cast<std::size_t>(omp_get_max_threads())));
  std::vector<std::vector<std::size_t>> count(static_cast<std::size_t>(threads), std::vector<std::size_t>(planes + 1, 0));
  const auto block = [&](int t) {
    return std::pair{n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads),
                     n * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads)};
  };
  bool bad = false;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(|| : bad)
  for (int t = 0; t < threads; ++t) {
    const auto [b, e] = block(t);
    std::vector<std::size_t>& c = count[static_cast<std::size_t>(t)];
    try {
      for (std::size_t k = b; k < e; ++k)
        if (used(k)) ++c[static_cast<std::size_t>(first_plane(plan, w[k]))];
    } catch (const std::invalid_argument&) {
      bad = true;
    }
  }
  if (bad) throw std::invalid_argument("a sample's w lies outside the range of the grid plan");
  SampleOrder order;
  order.plane_offset.assign(planes + 1, 0);
  std::size_t total = 0;
  for (std::size_t p = 0; p < planes; ++p) {
    order.plane_offset[p] = total;
    for (auto& c : count) {
      const std::size_t here = c[p];
      c[p] = total;  // this thread's first slot for plane p
      total += here;
    }
  }
  order.plane_offset[planes] = total;
  order.index.resize(total);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const auto [b, e] = block(t);
    std::vector<std::size_t>& c = count[static_cast<std::size_t>(t)];
    for (std::size_t k = b; k < e; ++k)
      if (used(k)) order.index[c[static_cast<std::size_t>(first_plane(plan, w[k]))]++] = k;
  }
  return order;
}

std::vector<Chunk> make_chunks(const GridPlan& plan, const SampleOrder& order, std::size_t capacity) {
  if (capacity == 0) throw std::invalid_argument("make_chunks: the capacity must be positive");
  const int last = static_cast<int>(plan.wstacking ? plan.planes : 1) - 1;
  std::vector<Chunk> chunks;
  for (std::size_t b = 0; b < order.size(); b += capacity) {
    Chunk c{b, std::min(order.size(), b + capacity)};
    c.first_plane = order.first_plane_at(c.begin);
    c.last_plane = std::min(last, order.first_plane_at(c.end - 1) + plane_support(plan) - 1);
    chunks.push_back(c);
  }
  return chunks;
}

}  // namespace gpuclean::imaging::gpu

#include "clean/gpu/minor_engine.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/joined_kernels.hpp"
#include "clean/gpu/team_kernel.hpp"
#include "clean/interaction_clusters.hpp"
#include "select/cuda/cuda_check.hpp"

namespace gpuclean::clean::gpu {
namespace {

CellGrid cell_grid(int half_width, std::size_t width, std::size_t height) {
  const InteractionGrid g = interaction_grid(static_cast<std::size_t>(half_width), width, height);
  return {static_cast<std::uint32_t>(g.cell), static_cast<std::uint32_t>(g.gx), static_cast<std::uint32_t>(g.gy)};
}

// The record pool: every cluster may run up to the budget, so a cycle cut by niter can record
// more than it keeps. Start at twice the budget; grow to eight times; the one-cluster run never
// needs more than the budget plus a flush group.
std::size_t initial_pool(std::size_t budget) {
  return std::max<std::size_t>(2 * budget + 32 * 64, 1u << 15);
}
std::size_t max_pool(std::size_t budget) {
  return std::max(initial_pool(budget), std::min<std::size_t>(std::size_t{1} << 24, 8 * budget));
}

std::size_t record_bytes(std::size_t records) {
  // pixel, flux, merge key and its sorted copy, order and its sorted copy, plus the sort scratch.
  return records * (4 + 4 + 8 + 8 + 4 + 4) + sort_pairs_u64_descending_temp_bytes(records);
}

}  // namespace

MinorCycleEngine::MinorCycleEngine(cudaStream_t stream, std::size_t width, std::size_t height, const float* patch,
                                   int half_width, std::size_t max_members, std::size_t max_budget,
                                   MinorEngineOptions options)
    : stream_(stream),
      width_(static_cast<std::uint32_t>(width)),
      height_(static_cast<std::uint32_t>(height)),
      patch_(patch),
      half_width_(half_width),
      max_members_(std::max<std::size_t>(max_members, 1)),
      max_budget_(std::max<std::size_t>(max_budget, 1)),
      options_(options),
      grid_(cell_grid(half_width, width, height)) {
  const std::size_t k = max_members_;
  cells_allocated_ = grid_.cells();
  box_ = cuda::DeviceBuffer<uint4>(grid_.cells(), stream_);
  parent_ = cuda::DeviceBuffer<std::uint32_t>(grid_.cells(), stream_);
  end_by_cell_ = cuda::DeviceBuffer<std::uint32_t>(grid_.cells(), stream_);
  for (auto* b : {&member_cell_, &labels_, &labels_sorted_, &idx_, &idx_sorted_, &grouped_xy_})
    *b = cuda::DeviceBuffer<std::uint32_t>(k, stream_);
  grouped_values_ = cuda::DeviceBuffer<float>(k, stream_);
  big_ = cuda::DeviceBuffer<ClusterRange>(k, stream_);
  small_ = cuda::DeviceBuffer<ClusterRange>(k, stream_);
  counters_ = cuda::DeviceBuffer<MinorCounters>(1, stream_);
  order_bins_ = cuda::DeviceBuffer<unsigned int>(kOrderBins, stream_);
  for (auto* b : {&px_, &px_sorted_, &rank_, &rank_sorted_}) *b = cuda::DeviceBuffer<std::uint32_t>(max_budget_, stream_);
  pool_max_ = max_pool(max_budget_);
  allocate_pool(options_.initial_pool ? std::min(options_.initial_pool, pool_max_) : initial_pool(max_budget_));
}

std::size_t MinorCycleEngine::bytes_needed(std::size_t width, std::size_t height, int half_width,
                                           std::size_t max_members, std::size_t max_budget) {
  const CellGrid g = cell_grid(half_width, width, height);
  const std::size_t cells = static_cast<std::size_t>(g.cells()) * (16 + 4 + 4) + kOrderBins * 4;
  const std::size_t members = max_members * (6 * 4 + 4 + 2 * sizeof(ClusterRange));
  const std::size_t ranks = max_budget * 16;
  const std::size_t pool = record_bytes(max_pool(max_budget));
  const std::size_t sorts = std::max(sort_pairs_u32_temp_bytes(max_members), sort_pairs_u32_temp_bytes(max_budget));
  return cells + members + ranks + pool + sorts + 4096;
}

void MinorCycleEngine::set_patch(const float* patch, int half_width) {
  const CellGrid g = cell_grid(half_width, width_, height_);
  if (g.cells() > cells_allocated_)
    throw std::logic_error("MinorCycleEngine::set_patch: a patch narrower than the engine was made for");
  patch_ = patch;
  half_width_ = half_width;
  grid_ = g;
}

void MinorCycleEngine::allocate_pool(std::size_t records) {
  pool_ = records;
  rec_pixel_ = cuda::DeviceBuffer<std::uint32_t>(records, stream_);
  rec_flux_ = cuda::DeviceBuffer<float>(records, stream_);
  rec_order_ = cuda::DeviceBuffer<unsigned long long>(records, stream_);
  rec_order_sorted_ = cuda::DeviceBuffer<unsigned long long>(records, stream_);
  ord_ = cuda::DeviceBuffer<std::uint32_t>(records, stream_);
  ord_sorted_ = cuda::DeviceBuffer<std::uint32_t>(records, stream_);
  if (planes_ > 0) rec_plane_flux_ = cuda::DeviceBuffer<float>(records * static_cast<std::size_t>(planes_), stream_);
  const std::size_t need = std::max({sort_pairs_u64_descending_temp_bytes(records),
                                     sort_pairs_u32_temp_bytes(max_members_), sort_pairs_u32_temp_bytes(max_budget_),
                                     std::size_t{256}});
  if (need > temp_bytes_) {
    temp_ = cuda::DeviceBuffer<std::byte>(need, stream_);
    temp_bytes_ = need;
  }
}

void MinorCycleEngine::group(const MinorCycleRequest& r, bool clustered) {
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(counters_.data(), 0, sizeof(MinorCounters), stream_));
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(order_bins_.data(), 0, kOrderBins * sizeof(unsigned int), stream_));
  peak_key(stream_, r.values, r.count, r.abs_key, counters_.data());
  clustered_ = clustered && r.count > kWarpTeamMax;
  if (!clustered_) {
    group_single(stream_, r.count, r.values, r.pixels, width_, grouped_values_.data(), grouped_xy_.data(), big_.data(),
                 small_.data(), counters_.data());
    return;
  }
  label_clusters(stream_, r.pixels, r.count, width_, grid_, half_width_, box_.data(), parent_.data(),
                 member_cell_.data(), labels_.data(), idx_.data());
  sort_pairs_u32(stream_, temp_.data(), temp_bytes_, labels_.data(), labels_sorted_.data(), idx_.data(),
                 idx_sorted_.data(), r.count, key_bits(grid_.cells()));
  group_clusters(stream_, labels_sorted_.data(), idx_sorted_.data(), r.count, r.values, r.pixels, width_,
                 grouped_values_.data(), grouped_xy_.data(), end_by_cell_.data(), big_.data(), small_.data(),
                 counters_.data());
}

std::uint32_t MinorCycleEngine::run(const MinorCycleRequest& r) { return run_cycle(r, nullptr); }

void MinorCycleEngine::sum_last_cycle(const float* comp_fluxes, float* delta, float* model) const {
  sum_per_pixel(stream_, px_sorted_.data(), rank_sorted_.data(), last_made_, comp_fluxes, delta, model);
}

std::uint32_t MinorCycleEngine::run_joined(const MinorCycleRequest& r, const JoinedMinorRequest& j) {
  if (j.planes != planes_) {  // the scratch of the members' plane values and the records' plane fluxes
    planes_ = j.planes;
    joined_keys_ = cuda::DeviceBuffer<float>(max_members_, stream_);
    joined_values_ = cuda::DeviceBuffer<float>(max_members_ * static_cast<std::size_t>(planes_), stream_);
    allocate_pool(pool_);
  }
  return run_cycle(r, &j);
}

void MinorCycleEngine::launch(const MinorCycleRequest& r, const JoinedMinorRequest* j) {
  if (j) {
    JoinedTeamArgs a;
    a.xy = grouped_xy_.data();
    a.keys_in = grouped_values_.data();
    a.keys = joined_keys_.data();
    a.vals = joined_values_.data();
    a.member_of = clustered_ ? idx_sorted_.data() : nullptr;
    a.member_values = j->member_values;
    a.big = big_.data();
    a.small = small_.data();
    a.counters = counters_.data();
    a.patches = j->patches;
    a.half_width = half_width_;
    a.width = width_;
    a.planes = j->planes;
    a.polarizations = j->polarizations;
    a.iweights = j->iweights;
    a.projection = j->projection;
    a.log_x = j->log_x;
    a.log_w = j->log_w;
    a.log_terms = j->log_terms;
    a.weights = r.weights;
    a.limit = r.limit;
    a.gain = r.gain;
    a.abs_key = r.abs_key;
    a.budget = r.budget;
    a.rec_pixel = rec_pixel_.data();
    a.rec_flux = rec_flux_.data();
    a.rec_plane_flux = rec_plane_flux_.data();
    a.rec_order = rec_order_.data();
    a.pool_capacity = pool_;
    a.order_bins = order_bins_.data();
    launch_joined_teams(stream_, a);
    return;
  }
  TeamArgs a;
  a.values = grouped_values_.data();
  a.xy = grouped_xy_.data();
  a.big = big_.data();
  a.small = small_.data();
  a.counters = counters_.data();
  a.patch = patch_;
  a.half_width = half_width_;
  a.width = width_;
  a.limit = r.limit;
  a.gain = r.gain;
  a.weights = r.weights;
  a.abs_key = r.abs_key;
  a.budget = r.budget;
  a.rec_pixel = rec_pixel_.data();
  a.rec_flux = rec_flux_.data();
  a.rec_order = rec_order_.data();
  a.pool_capacity = pool_;
  a.order_bins = order_bins_.data();
  a.shared_bytes = team_shared_bytes();
  launch_teams(stream_, a);
}

std::uint32_t MinorCycleEngine::run_cycle(const MinorCycleRequest& r, const JoinedMinorRequest* j) {
  if (r.count > max_members_ || r.budget > max_budget_)
    throw std::logic_error("MinorCycleEngine: active set or budget beyond what the engine was sized for");
  last_made_ = 0;
  if (r.count == 0 || r.budget == 0) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  bool clustered = options_.clustered;
  MinorCounters c;
  while (true) {
    group(r, clustered);
    launch(r, j);
    // The host waits for the team kernel before it asks for the counters: a device-to-host copy
    // queued behind a kernel of a quarter of a second holds its copy engine's queue, and with a
    // few workers on the GPU every other worker's downloads waited behind it.
    team_done_.record(stream_);
    team_done_.synchronize();
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(&c, counters_.data(), sizeof c, cudaMemcpyDeviceToHost, stream_));
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(stream_));
    if (!c.overflow) break;
    // Clusters recorded more than the pool holds (a cycle cut by niter): again with a larger
    // pool, or as one cluster, which records at most the budget.
    ++stats_.reruns;
    if (pool_ < pool_max_) {
      allocate_pool(std::min(2 * pool_, pool_max_));
    } else if (clustered) {
      clustered = false;
      ++stats_.sequential;
      if (pool_ < r.budget + 32) allocate_pool(r.budget + 32);
    } else {
      throw std::logic_error("MinorCycleEngine: one cluster overflowed a pool larger than its budget");
    }
  }

  const std::size_t records = static_cast<std::size_t>(c.records);
  const auto made = static_cast<std::uint32_t>(std::min<std::size_t>(records, r.budget));
  const std::size_t clusters = static_cast<std::size_t>(c.n_big) + c.n_small;
  const std::uint32_t* order = nullptr;  // one cluster: the records are already in order
  if (clusters > 1 && made > 0) {
    iota(stream_, ord_.data(), records);
    sort_pairs_u64_descending(stream_, temp_.data(), temp_bytes_, rec_order_.data(), rec_order_sorted_.data(),
                              ord_.data(), ord_sorted_.data(), records);
    order = ord_sorted_.data();
  }
  emit_components(stream_, order, made, rec_pixel_.data(), rec_flux_.data(), r.flux_divisor, r.comp_pixels,
                  r.comp_fluxes, px_.data(), rank_.data());
  sort_pairs_u32(stream_, temp_.data(), temp_bytes_, px_.data(), px_sorted_.data(), rank_.data(), rank_sorted_.data(),
                 made, key_bits(static_cast<std::size_t>(width_) * height_));
  sum_per_pixel(stream_, px_sorted_.data(), rank_sorted_.data(), made, r.comp_fluxes, r.delta, r.model);
  if (j)
    emit_plane_fluxes(stream_, order, made, rec_plane_flux_.data(), j->planes, r.flux_divisor, j->comp_plane_fluxes,
                      j->comp_stride);
  last_made_ = made;

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Block b of the team kernel gets work when b < n_big (a large cluster) or b < n_small (small
  // clusters go to blocks round-robin).
  const double busy = std::min(1.0, static_cast<double>(std::max(c.n_big, c.n_small)) / team_blocks());
  weighted_busy_ += busy * seconds;
  weighted_seconds_ += seconds;
  ++stats_.cycles;
  stats_.clusters += clusters;
  stats_.longest_chain = std::max<std::size_t>(stats_.longest_chain, c.longest);
  stats_.widest_cluster = std::max<std::size_t>(stats_.widest_cluster, c.widest);
  stats_.sm_busy_fraction = weighted_seconds_ > 0 ? weighted_busy_ / weighted_seconds_ : busy;
  return made;
}

}  // namespace gpuclean::clean::gpu

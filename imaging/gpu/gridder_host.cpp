// Host pieces the GPU gridder's drivers share (gridder_host.hpp).
#include "imaging/gpu/gridder_host.hpp"

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "imaging/grid_plan.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::imaging::gpu {
namespace {

constexpr std::size_t kIdle = 4;  // stagings kept for later users
struct Pool {
  std::mutex mutex;
  std::vector<std::pair<int, std::unique_ptr<cuda::PinnedStaging>>> idle;
};
// Never destroyed: freeing pinned memory from static destructors may outlive the runtime.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

}  // namespace

StagingLease::StagingLease(int device) : device_(device) {
  {
    std::lock_guard lock(pool().mutex);
    auto& idle = pool().idle;
    for (auto it = idle.begin(); it != idle.end(); ++it)
      if (it->first == device) {
        staging_ = std::move(it->second);
        idle.erase(it);
        return;
      }
  }
  staging_ = std::make_unique<cuda::PinnedStaging>();
}

StagingLease::~StagingLease() {
  std::lock_guard lock(pool().mutex);
  auto& idle = pool().idle;
  if (idle.size() < kIdle) idle.emplace_back(device_, std::move(staging_));
}

void gather(const Samples& s, const SampleOrder& order, const Chunk& c, bool vis, bool weight, HostChunk& h) {
  const std::size_t n = c.size();
  h.u.resize(n), h.v.resize(n), h.w.resize(n);
  if (vis) h.vis.resize(n);
  if (weight) h.weight.resize(n);
  const auto count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    const std::size_t k = order.index[c.begin + static_cast<std::size_t>(i)];
    h.u[static_cast<std::size_t>(i)] = s.u[k];
    h.v[static_cast<std::size_t>(i)] = s.v[k];
    h.w[static_cast<std::size_t>(i)] = s.w[k];
    if (vis) h.vis[static_cast<std::size_t>(i)] = s.vis[k];
    if (weight) h.weight[static_cast<std::size_t>(i)] = s.weight[k];
  }
}


cuda::DeviceBuffer<double> axis_correction(cuda::PinnedStaging& staging, cudaStream_t stream, const GridPlan& plan,
                                           std::size_t size, std::size_t cells) {
  std::vector<double> c(size);
  for (std::size_t x = 0; x < size; ++x)
    c[x] = plan.kernel.correction((static_cast<double>(x) - static_cast<double>(size / 2)) / static_cast<double>(cells));
  cuda::DeviceBuffer<double> d(size, stream);
  cuda::upload(staging, stream, d.data(), c.data(), size);
  return d;
}

std::size_t imaging_budget(const GpuGridderOptions& options) {
  const cuda::MemoryInfo mem = cuda::device_memory();
  const std::size_t margin = (std::size_t{256} << 20) + mem.total_bytes / 50;
  const std::size_t available = mem.free_bytes > margin ? mem.free_bytes - margin : 0;
  std::size_t wanted = options.budget_bytes;
  if (wanted == 0)
    if (const char* env = std::getenv("GPUCLEAN_TEST_IMAGING_BUDGET"); env && *env) {
      char* end = nullptr;
      wanted = std::strtoull(env, &end, 10);
      if (*end != '\0' || wanted == 0)
        throw std::invalid_argument("GPUCLEAN_TEST_IMAGING_BUDGET must be a positive number of bytes, not '" +
                                    std::string(env) + "'");
    }
  return wanted ? std::min(wanted, available) : available;
}

}  // namespace gpuclean::imaging::gpu

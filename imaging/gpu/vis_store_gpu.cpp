// The VisStore's GPU backend (vis_store_gpu.hpp): resident channels, or the streamed fallback.
#include "imaging/gpu/vis_store_gpu.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "imaging/gpu/fft_plan_pool.hpp"
#include "imaging/gpu/gridder_device.hpp"
#include "imaging/gpu/gridder_host.hpp"
#include "imaging/gpu/sample_order.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/cuda/device_info.hpp"
#include "select/cuda/pinned_staging.hpp"
#include "select/cuda/stream.hpp"

namespace gpuclean::imaging {
namespace {

// cuFFT's plan data, the context's own allocations, the pool's rounding.
constexpr std::size_t kSlack = std::size_t{64} << 20;
// What a resident sample keeps after its preparation: the sorted key and position, du, dv, kw, iu,
// iv, the data and PSF values, its subproblem start, the model's sums and the residual's value.
constexpr std::size_t kResidentBytes = 8 + 4 + 3 * 8 + 2 * 4 + 2 * 8 + 4 + 16 + 8;
// CUB's sort takes int counts and the records uint32 positions.
constexpr std::size_t kMaxResident = (std::size_t{1} << 31) - 2;

std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

class GpuVisStoreBackend final : public VisStoreBackend {
 public:
  explicit GpuVisStoreBackend(const GpuGridderOptions& options) : options_(options), device_(options.device) {
    cuda::ScopedDevice device(device_);
    staging_.emplace(device_);
    budget_ = gpu::imaging_budget(options);
  }
  ~GpuVisStoreBackend() override {
    cuda::ScopedDevice device(device_);
    channels_.clear();
    grid_ = {}, fft_work_ = {}, acc_ = {};
    if (stream_) stream_->synchronize();
  }
  GpuVisStoreBackend(const GpuVisStoreBackend&) = delete;
  GpuVisStoreBackend& operator=(const GpuVisStoreBackend&) = delete;

  void add_channel(std::size_t c, const GridPlan& plan, const ChannelSamples& s) override {
    if (c != channels_.size()) throw std::logic_error("GPU VisStore: channels must be added in order");
    channels_.emplace_back();
    if (streamed_) return;
    cuda::ScopedDevice device(options_.device);
    const std::size_t n = s.cw.size();
    const std::size_t groups = plan.wstacking ? plan.planes : 1;
    const std::size_t shared = shared_bytes(plan);
    // The preparation holds the whole ChunkWork; what stays is kResidentBytes a sample.
    const std::size_t peak =
        shared + resident_bytes_ +
        std::max(gpu::ChunkWork::bytes_per_sample(true, 2) * n + gpu::ChunkWork::bytes_besides(n, groups),
                 kResidentBytes * n);
    // No channel number: under several GPUs (vis_store_multi) c is the lane's own index, and the
    // lane's phrase names its channels. The peak while preparing c is a lower bound of keeping all.
    if (n > kMaxResident) {
      stream_all("a channel has " + std::to_string(n) + " samples, more than one GPU keeps");
      return;
    }
    if (peak > budget_) {
      stream_all("keeping the channels takes at least " + gib(peak) + ", over the budget of " + gib(budget_));
      return;
    }
    ensure_shared(plan);
    channels_.back().resident.emplace(prepare(plan, s));
    resident_bytes_ += n * kResidentBytes + (plan.image.width + plan.image.height) * sizeof(double);
  }

  std::vector<double> invert(std::size_t c, const GridPlan& plan, const ChannelSamples& s,
                             std::span<const std::complex<float>> host_model, VisValues values) override {
    cuda::ScopedDevice device(options_.device);
    Resident* r = resident(c);
    if (!r) return invert_streamed(plan, s, host_model, values);
    const cudaStream_t st = stream_->get();
    gpu::Records rec = r->work->records();
    switch (values) {
      case VisValues::kPsf: rec.value[0] = r->work->value[1].data(); break;
      case VisValues::kData: break;
      case VisValues::kResidual:
        if (r->has_model) rec.value[0] = r->residual.data();  // no model yet: the data
        break;
    }
    rec.value[1] = nullptr;
    const std::size_t pixels = plan.image.width * plan.image.height;
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(acc_.data(), 0, pixels * sizeof(double), st));
    gpu::FftPlanLease fft(plan.nu, plan.nv, 1);
    fft.bind(st, fft_work_.data());
    const int support = gpu::plane_support(plan);
    for (int plane = r->first_plane; plane <= r->last_plane; ++plane) {
      const auto [lo, hi] = gpu::groups_of(r->layout, plane, support);
      if (lo > hi) continue;
      const std::uint32_t sub_begin = r->index.sub_offset[static_cast<std::size_t>(lo)];
      const std::uint32_t sub_end = r->index.sub_offset[static_cast<std::size_t>(hi) + 1];
      if (sub_begin == sub_end) continue;
      GPUCLEAN_CUDA_TRY(cudaMemsetAsync(grid_.data(), 0, plan.nu * plan.nv * sizeof(float2), st));
      gpu::grid_plane(st, r->g, rec, 1, plane, sub_begin, sub_end, grid_.data());
      fft.forward(grid_.data());
      gpu::screen_plane(st, r->g, plane, 1, grid_.data(), acc_.data());
    }
    gpu::apply_correction(st, r->g, r->cu.data(), r->cv.data(), acc_.data(), 1);
    std::vector<double> image(pixels);
    cuda::download(staging_->get(), st, image.data(), acc_.data(), pixels);
    return image;
  }

  void predict(std::size_t c, const GridPlan& plan, const ChannelSamples& s, std::span<const double> model,
               std::vector<std::complex<float>>& host_model) override {
    cuda::ScopedDevice device(options_.device);
    Resident* r = resident(c);
    if (!r) {
      const std::vector<std::complex<double>> vis = predict_gpu(plan, model, Samples{s.u, s.v, s.w, {}, {}}, options_);
      for (std::size_t k = 0; k < vis.size(); ++k) host_model[k] = std::complex<float>(vis[k]);
      return;
    }
    const cudaStream_t st = stream_->get();
    const std::size_t pixels = plan.image.width * plan.image.height, n = r->samples;
    cuda::upload(staging_->get(), st, acc_.data(), model.data(), pixels);  // the corrected model, in place
    gpu::apply_correction(st, r->g, r->cu.data(), r->cv.data(), acc_.data(), 1);
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(r->model.data(), 0, n * sizeof(double2), st));
    gpu::FftPlanLease fft(plan.nu, plan.nv, 1);
    fft.bind(st, fft_work_.data());
    const gpu::Records rec = r->work->records();
    const int support = gpu::plane_support(plan);
    for (int plane = r->first_plane; plane <= r->last_plane; ++plane) {
      const auto [lo, hi] = gpu::groups_of(r->layout, plane, support);
      if (lo > hi) continue;
      const std::uint32_t begin = r->index.sample_offset[static_cast<std::size_t>(lo)];
      const std::uint32_t end = r->index.sample_offset[static_cast<std::size_t>(hi) + 1];
      if (begin == end) continue;
      gpu::model_to_grid(st, r->g, plane, acc_.data(), grid_.data());
      fft.inverse(grid_.data());
      gpu::degrid_plane(st, r->g, rec, plane, begin, end, grid_.data(), r->model.data());
    }
    gpu::residual_values(st, n, rec.value[0], r->work->value[1].data(), r->model.data(), r->residual.data());
    r->has_model = true;
    stream_->synchronize();  // the staging's host buffer is free again, errors surface here
  }

  std::string describe() const override {
    if (streamed_) return "streamed from pinned host memory on GPU " + std::to_string(device_) + " (" + why_ + ")";
    return "resident on GPU " + std::to_string(device_) + ": " + gib(resident_bytes_ + shared_) + " of a budget of " +
           gib(budget_);
  }

 private:
  struct Resident {
    gpu::DeviceGeometry g;
    gpu::KeyLayout layout;
    gpu::ChunkIndex index;
    int first_plane = 0, last_plane = -1;
    std::size_t samples = 0;
    std::unique_ptr<gpu::ChunkWork> work;
    cuda::DeviceBuffer<double2> model;    // the degridder's sums in sorted order (valid with has_model)
    cuda::DeviceBuffer<float2> residual;  // data − model values in sorted order
    cuda::DeviceBuffer<double> cu, cv;
    bool has_model = false;
  };
  struct Channel {
    std::optional<Resident> resident;
  };

  Resident* resident(std::size_t c) {
    Channel& ch = channels_.at(c);
    return ch.resident ? &*ch.resident : nullptr;
  }

  // One grid, cuFFT's work area, one image accumulator (which predict reuses for the corrected model).
  static std::size_t shared_bytes(const GridPlan& plan) {
    const gpu::FftPlanLease fft(plan.nu, plan.nv, 1);
    return plan.nu * plan.nv * sizeof(float2) + fft.work_bytes() +
           plan.image.width * plan.image.height * sizeof(double) + kSlack;
  }

  void ensure_shared(const GridPlan& plan) {
    if (!stream_) stream_.emplace();
    const cudaStream_t st = stream_->get();
    const gpu::FftPlanLease fft(plan.nu, plan.nv, 1);
    const std::size_t cells = plan.nu * plan.nv, pixels = plan.image.width * plan.image.height;
    if (grid_.size() < cells) grid_ = cuda::DeviceBuffer<float2>(cells, st);
    if (fft_work_.bytes() < std::max<std::size_t>(fft.work_bytes(), 1))
      fft_work_ = cuda::DeviceBuffer<std::byte>(std::max<std::size_t>(fft.work_bytes(), 1), st);
    if (acc_.size() < pixels) acc_ = cuda::DeviceBuffer<double>(pixels, st);
    shared_ = grid_.bytes() + fft_work_.bytes() + acc_.bytes() + kSlack;
  }

  // Upload in first-plane order, sort, records for the data and the PSF, subproblems; then free
  // what only the preparation needed.
  Resident prepare(const GridPlan& plan, const ChannelSamples& s) {
    const cudaStream_t st = stream_->get();
    Resident r;
    r.g = gpu::device_geometry(plan);
    const Samples samples{s.u, s.v, s.w, s.vis, s.cw};
    const gpu::SampleOrder order = gpu::order_by_first_plane(plan, s.w, s.cw);
    if (order.size() != s.cw.size()) throw std::logic_error("GPU VisStore: a stored sample has weight 0");
    r.samples = order.size();
    const std::vector<gpu::Chunk> chunks = gpu::make_chunks(plan, order, order.size());
    const gpu::Chunk& chunk = chunks.front();
    r.first_plane = chunk.first_plane, r.last_plane = chunk.last_plane;
    r.layout = gpu::key_layout(r.g, chunk);
    r.work = std::make_unique<gpu::ChunkWork>(order.size(), static_cast<int>(plan.wstacking ? plan.planes : 1), true,
                                              2, st);
    gpu::HostChunk host;
    gpu::gather(samples, order, chunk, true, true, host);
    gpu::ChunkWork& w = *r.work;
    const std::size_t n = order.size();
    cuda::upload(staging_->get(), st, w.u.data(), host.u.data(), n);
    cuda::upload(staging_->get(), st, w.v.data(), host.v.data(), n);
    cuda::upload(staging_->get(), st, w.w.data(), host.w.data(), n);
    cuda::upload(staging_->get(), st, w.vis.data(), reinterpret_cast<const float2*>(host.vis.data()), n);
    cuda::upload(staging_->get(), st, w.weight.data(), host.weight.data(), n);
    r.index = gpu::prepare_chunk(st, r.g, r.layout, n, w, true, true);  // synchronises
    w.u = {}, w.v = {}, w.w = {}, w.vis = {}, w.weight = {};
    w.key[1 - w.current] = {}, w.index[1 - w.current] = {};
    w.seg_start = {}, w.sub_flag = {}, w.temp = {};
    r.model = cuda::DeviceBuffer<double2>(n, st);
    r.residual = cuda::DeviceBuffer<float2>(n, st);
    r.cu = gpu::axis_correction(staging_->get(), st, plan, plan.image.width, plan.nu);
    r.cv = gpu::axis_correction(staging_->get(), st, plan, plan.image.height, plan.nv);
    stream_->synchronize();
    return r;
  }

  void stream_all(std::string why) {
    for (Channel& ch : channels_) ch.resident.reset();
    grid_ = {}, fft_work_ = {}, acc_ = {};
    resident_bytes_ = shared_ = 0;
    streamed_ = true;
    why_ = std::move(why);
  }

  std::vector<double> invert_streamed(const GridPlan& plan, const ChannelSamples& s,
                                      std::span<const std::complex<float>> host_model, VisValues values) {
    std::vector<std::complex<float>> residual;
    std::span<const std::complex<float>> v = values == VisValues::kPsf ? std::span(s.one) : std::span(s.vis);
    if (values == VisValues::kResidual) {
      residual.resize(s.vis.size());
      for (std::size_t k = 0; k < residual.size(); ++k) residual[k] = s.vis[k] - host_model[k];
      v = residual;
    }
    return invert_gpu(plan, Samples{s.u, s.v, s.w, v, s.cw}, true, false, options_).dirty;
  }

  GpuGridderOptions options_;
  int device_;
  std::optional<gpu::StagingLease> staging_;
  std::size_t budget_ = 0;
  // The stream outlives every buffer made on it (declared before them).
  std::optional<cuda::Stream> stream_;
  cuda::DeviceBuffer<float2> grid_;
  cuda::DeviceBuffer<std::byte> fft_work_;
  cuda::DeviceBuffer<double> acc_;
  std::vector<Channel> channels_;
  std::size_t resident_bytes_ = 0, shared_ = 0;
  bool streamed_ = false;
  std::string why_;
};

}  // namespace

std::unique_ptr<VisStoreBackend> make_gpu_vis_store_backend(const GpuGridderOptions& options) {
  return std::make_unique<GpuVisStoreBackend>(options);
}

}  // namespace gpuclean::imaging

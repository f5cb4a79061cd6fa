// Host drivers of the GPU gridder: order, memory plan, chunk loop, plane sweep (gridder_gpu.hpp
// lists the steps). One stream; the host waits once per chunk (for its group offsets) and at the
// end, never per plane.
#include "imaging/gpu/gridder_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "imaging/gpu/fft_plan_pool.hpp"
#include "imaging/gpu/gridder_device.hpp"
#include "imaging/gpu/gridder_host.hpp"
#include "imaging/gpu/phase_timer.hpp"
#include "imaging/gpu/sample_order.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/cuda/device_info.hpp"
#include "select/cuda/pinned_staging.hpp"
#include "select/cuda/stream.hpp"

namespace gpuclean::imaging {
namespace {

using gpu::Chunk;
using gpu::ChunkIndex;
using gpu::Phase;
using gpu::StagingLease;
using gpu::axis_correction;
using gpu::groups_of;
using gpu::HostChunk;
using gpu::gather;
using Clock = std::chrono::steady_clock;

void upload(cuda::PinnedStaging& staging, cudaStream_t stream, gpu::ChunkWork& work, const HostChunk& h, bool vis,
            bool weight) {
  const std::size_t n = h.u.size();
  cuda::upload(staging, stream, work.u.data(), h.u.data(), n);
  cuda::upload(staging, stream, work.v.data(), h.v.data(), n);
  cuda::upload(staging, stream, work.w.data(), h.w.data(), n);
  if (vis) cuda::upload(staging, stream, work.vis.data(), reinterpret_cast<const float2*>(h.vis.data()), n);
  if (weight) cuda::upload(staging, stream, work.weight.data(), h.weight.data(), n);
}

void check_lengths(const Samples& s, bool vis, bool weight) {
  const std::size_t n = s.u.size();
  if (s.v.size() != n || s.w.size() != n || (vis && s.vis.size() != n) || (weight && s.weight.size() != n))
    throw std::invalid_argument("the GPU gridder's sample arrays differ in length");
}

double since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

std::string GridderTimings::describe() const {
  char buf[400];
  const double device = upload_ms + prep_ms + grid_ms + fft_ms + screen_ms + correct_ms + download_ms;
  std::snprintf(buf, sizeof buf,
                "%zu samples, %zu plane sweeps, %zu chunks: upload %.2f, prep %.2f, grid %.2f, FFT %.2f, screen %.2f, "
                "correct %.2f, download %.2f ms (device %.2f, wall %.2f ms; %.3g samples/s gridding)",
                samples, planes, chunks, upload_ms, prep_ms, grid_ms, fft_ms, screen_ms, correct_ms, download_ms, device,
                wall_ms, grid_ms > 0 ? static_cast<double>(samples) / (grid_ms * 1e-3) : 0.0);
  return buf;
}

InvertOutput invert_gpu(const GridPlan& plan, const Samples& s, bool dirty, bool psf, const GpuGridderOptions& options) {
  const auto t0 = Clock::now();
  if (!dirty && !psf) throw std::invalid_argument("invert_gpu: ask for the dirty image, the PSF or both");
  check_lengths(s, dirty, true);
  const gpu::DeviceGeometry g = gpu::device_geometry(plan);
  const int images = dirty ? (psf ? 2 : 1) : 1;
  cuda::ScopedDevice device(options.device);
  const gpu::SampleOrder order = gpu::order_by_first_plane(plan, s.w, s.weight);
  const GpuGridderMemory memory = plan_gpu_gridder_memory(plan, order.size(), static_cast<std::size_t>(images), options,
                                                          GridderPass::kInvert);

  InvertOutput result;
  const std::size_t cells = plan.nu * plan.nv, pixels = plan.image.width * plan.image.height;
  std::vector<double>* out[2] = {dirty ? &result.dirty : &result.psf, &result.psf};
  // The result's fresh pages are faulted in and zeroed (~5 GB/s on one core) while the host
  // sorts and the device sweeps, not between the downloads.
  std::jthread touch([&out, images, pixels] {
    for (int i = 0; i < images; ++i) out[i]->resize(pixels);
  });
  const cuda::Stream stream;
  const cudaStream_t st = stream.get();
  gpu::PhaseTimer timer(st);
  StagingLease staging_lease(options.device);
  cuda::PinnedStaging& staging = staging_lease.get();
  gpu::FftPlanLease fft(plan.nu, plan.nv, images);
  cuda::DeviceBuffer<float2> grids(cells * static_cast<std::size_t>(images), st);
  cuda::DeviceBuffer<std::byte> fft_work(std::max<std::size_t>(fft.work_bytes(), 1), st);
  fft.bind(st, fft_work.data());
  cuda::DeviceBuffer<double> acc(pixels * static_cast<std::size_t>(images), st);
  GPUCLEAN_CUDA_TRY(cudaMemsetAsync(acc.data(), 0, acc.bytes(), st));
  const cuda::DeviceBuffer<double> cu = axis_correction(staging, st, plan, plan.image.width, plan.nu);
  const cuda::DeviceBuffer<double> cv = axis_correction(staging, st, plan, plan.image.height, plan.nv);

  GridderTimings& t = result.timings;
  t.samples = order.size();
  const int support = gpu::plane_support(plan);
  if (order.size() > 0) {
    const std::vector<Chunk> chunks = gpu::make_chunks(plan, order, memory.chunk_samples);
    t.chunks = chunks.size();
    gpu::ChunkWork work(std::min(memory.chunk_samples, order.size()), static_cast<int>(plan.wstacking ? plan.planes : 1),
                        true, images, st);
    HostChunk host;
    for (const Chunk& c : chunks) {
      gather(s, order, c, dirty, true, host);  // overlaps the previous chunk's sweep
      timer.mark(Phase::kIdle);
      upload(staging, st, work, host, dirty, true);
      timer.mark(Phase::kUpload);
      const gpu::KeyLayout layout = gpu::key_layout(g, c);
      const ChunkIndex index = gpu::prepare_chunk(st, g, layout, c.size(), work, dirty, psf);
      timer.mark(Phase::kPrep);
      const gpu::Records records = work.records();
      for (int plane = c.first_plane; plane <= c.last_plane; ++plane) {
        const auto [lo, hi] = groups_of(layout, plane, support);
        if (lo > hi) continue;
        const std::uint32_t sub_begin = index.sub_offset[static_cast<std::size_t>(lo)];
        const std::uint32_t sub_end = index.sub_offset[static_cast<std::size_t>(hi) + 1];
        if (sub_begin == sub_end) continue;  // no sample touches this plane
        GPUCLEAN_CUDA_TRY(cudaMemsetAsync(grids.data(), 0, grids.bytes(), st));
        gpu::grid_plane(st, g, records, images, plane, sub_begin, sub_end, grids.data());
        timer.mark(Phase::kGrid);
        fft.forward(grids.data());
        timer.mark(Phase::kFft);
        gpu::screen_plane(st, g, plane, images, grids.data(), acc.data());
        timer.mark(Phase::kScreen);
        ++t.planes;
      }
    }
  }
  gpu::apply_correction(st, g, cu.data(), cv.data(), acc.data(), images);
  timer.mark(Phase::kCorrect);
  touch.join();
  for (int i = 0; i < images; ++i) {
    cuda::download(staging, st, out[i]->data(), acc.data() + static_cast<std::size_t>(i) * pixels, pixels);
  }
  timer.mark(Phase::kDownload);
  timer.add_to(t);
  t.wall_ms = since(t0);
  return result;
}

std::vector<std::complex<double>> predict_gpu(const GridPlan& plan, std::span<const double> model, const Samples& s,
                                              const GpuGridderOptions& options, GridderTimings* timings) {
  const auto t0 = Clock::now();
  const ImageGeometry& img = plan.image;
  if (model.size() != img.width * img.height) throw std::invalid_argument("the model does not have the plan's image size");
  check_lengths(s, false, false);
  const gpu::DeviceGeometry g = gpu::device_geometry(plan);
  cuda::ScopedDevice device(options.device);
  const gpu::SampleOrder order = gpu::order_by_first_plane(plan, s.w, {});
  const GpuGridderMemory memory = plan_gpu_gridder_memory(plan, order.size(), 1, options, GridderPass::kPredict);

  const cuda::Stream stream;
  const cudaStream_t st = stream.get();
  gpu::PhaseTimer timer(st);
  StagingLease staging_lease(options.device);
  cuda::PinnedStaging& staging = staging_lease.get();
  gpu::FftPlanLease fft(plan.nu, plan.nv, 1);
  const std::size_t cells = plan.nu * plan.nv, pixels = img.width * img.height;
  cuda::DeviceBuffer<float2> grid(cells, st);
  cuda::DeviceBuffer<std::byte> fft_work(std::max<std::size_t>(fft.work_bytes(), 1), st);
  fft.bind(st, fft_work.data());
  cuda::DeviceBuffer<double> corrected(pixels, st);
  cuda::upload(staging, st, corrected.data(), model.data(), pixels);
  const cuda::DeviceBuffer<double> cu = axis_correction(staging, st, plan, img.width, plan.nu);
  const cuda::DeviceBuffer<double> cv = axis_correction(staging, st, plan, img.height, plan.nv);
  timer.mark(Phase::kUpload);
  gpu::apply_correction(st, g, cu.data(), cv.data(), corrected.data(), 1);
  timer.mark(Phase::kCorrect);

  GridderTimings t;
  t.samples = order.size();
  std::vector<std::complex<double>> result(s.u.size(), 0.0);
  const int support = gpu::plane_support(plan);
  if (order.size() > 0) {
    const std::vector<Chunk> chunks = gpu::make_chunks(plan, order, memory.chunk_samples);
    t.chunks = chunks.size();
    gpu::ChunkWork work(std::min(memory.chunk_samples, order.size()), static_cast<int>(plan.wstacking ? plan.planes : 1),
                        false, 1, st);
    HostChunk host;
    std::vector<std::complex<double>> chunk_out(work.capacity);
    for (const Chunk& c : chunks) {
      gather(s, order, c, false, false, host);
      timer.mark(Phase::kIdle);
      upload(staging, st, work, host, false, false);
      timer.mark(Phase::kUpload);
      const gpu::KeyLayout layout = gpu::key_layout(g, c);
      const ChunkIndex index = gpu::prepare_chunk(st, g, layout, c.size(), work, false, false);
      GPUCLEAN_CUDA_TRY(cudaMemsetAsync(work.acc.data(), 0, c.size() * sizeof(double2), st));
      timer.mark(Phase::kPrep);
      const gpu::Records records = work.records();
      for (int plane = c.first_plane; plane <= c.last_plane; ++plane) {
        const auto [lo, hi] = groups_of(layout, plane, support);
        if (lo > hi) continue;
        const std::uint32_t begin = index.sample_offset[static_cast<std::size_t>(lo)];
        const std::uint32_t end = index.sample_offset[static_cast<std::size_t>(hi) + 1];
        if (begin == end) continue;
        gpu::model_to_grid(st, g, plane, corrected.data(), grid.data());
        timer.mark(Phase::kScreen);
        fft.inverse(grid.data());
        timer.mark(Phase::kFft);
        gpu::degrid_plane(st, g, records, plane, begin, end, grid.data(), work.acc.data());
        timer.mark(Phase::kGrid);
        ++t.planes;
      }
      gpu::finish_predict(st, g, records, work.w.data(), c.size(), work.acc.data(), work.out.data());
      timer.mark(Phase::kGrid);
      cuda::download(staging, st, reinterpret_cast<double2*>(chunk_out.data()), work.out.data(), c.size());
      timer.mark(Phase::kDownload);
      const auto count = static_cast<std::ptrdiff_t>(c.size());
#pragma omp parallel for schedule(static) if (count > 65536)
      for (std::ptrdiff_t i = 0; i < count; ++i)
        result[order.index[c.begin + static_cast<std::size_t>(i)]] = chunk_out[static_cast<std::size_t>(i)];
    }
  }
  timer.add_to(t);
  t.wall_ms = since(t0);
  if (timings) *timings = t;
  return result;
}

}  // namespace gpuclean::imaging

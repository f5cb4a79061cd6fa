#include "clean/gpu/joined_split_gpu.hpp"

#include <algorithm>
#include <string>

#include "clean/errors.hpp"
#include "clean/gpu/clean_kernels.hpp"
#include "clean/gpu/cluster_kernels.hpp"
#include "clean/gpu/fft_convolver_gpu.hpp"
#include "clean/gpu/joined_kernels.hpp"
#include "clean/scale_kernels.hpp"
#include "select/cuda/cuda_check.hpp"
#include "select/cuda/device_info.hpp"
#include "select/cuda/pinned_staging.hpp"

namespace gpuclean::clean::gpu {
namespace {

// A block's copy of the scale kernels (ScaleImagesGpu's convolve_into and spread, with the same
// layout, so the same floats): the leader's block uses the run's ScaleImagesGpu instead.
class ScaleKernels {
 public:
  ScaleKernels(GpuResources& resources, cudaStream_t s, const std::vector<CleanScale>& scales, std::size_t width,
               std::size_t height)
      : s_(s), n_(width * height), conv_(scales.size()) {
    std::size_t side = 1;  // ScaleImagesGpu's: every kernel on the widest one's grid
    for (const CleanScale& sc : scales) side = std::max(side, sc.kernel.width);
    for (std::size_t i = 0; i < scales.size(); ++i) {
      if (scales[i].kernel.size() == 1) continue;
      const HostImage k = embed_centred(scales[i].kernel, side);
      cuda::DeviceBuffer<float> d_kernel(k.size(), s);
      GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d_kernel.data(), k.pixels.data(), k.size() * sizeof(float),
                                        cudaMemcpyHostToDevice, s));
      conv_[i] = std::make_unique<FftConvolverGpu>(resources.plans(), s, d_kernel.data(), k.width, k.height,
                                                   k.width / 2, k.height / 2, width, height);
      if (finite_.size() == 0) finite_ = cuda::DeviceBuffer<float>(n_, s);
    }
  }
  void convolve_into(std::size_t scale, const float* image, float* out) {
    zero_nan(s_, image, finite_.data(), n_);
    conv_[scale]->convolve(finite_.data());
    conv_[scale]->add_to(nullptr, out);
  }
  void spread(std::size_t scale, float* delta, float* model) {
    conv_[scale]->convolve(delta);
    conv_[scale]->add_to(model, model);
    conv_[scale]->add_to(nullptr, delta);
  }

 private:
  cudaStream_t s_;
  std::size_t n_;
  std::vector<std::unique_ptr<FftConvolverGpu>> conv_;
  cuda::DeviceBuffer<float> finite_;
};

template <class T>
void grow(cuda::DeviceBuffer<T>& b, std::size_t size, cudaStream_t s) {
  if (b.size() < size) b = cuda::DeviceBuffer<T>(std::max(size, 2 * b.size()), s);
}

}  // namespace

// One GPU's block of planes [first, first + count): its images, PSF spectra and convolvers, and
// what it receives each step.
struct JoinedSplitGpu::Block {
  int device = 0;
  std::size_t first = 0, count = 0;
  std::unique_ptr<GpuResources> own;  // null on the leader's block, which uses the run's
  GpuResources* res = nullptr;
  cudaStream_t s = nullptr;
  std::size_t n = 0;
  cuda::DeviceBuffer<float> residuals, models, deltas, iweights, members, acc, rows, d_psf;
  cuda::DeviceBuffer<std::uint32_t> pixels, records;  // records: the cycle's pixel_sorted, then rank_sorted
  cuda::DeviceBuffer<std::uint8_t> mask;  // subtract_from()'s: the masked copy it writes is never read
  std::vector<std::shared_ptr<const Spectrum>> spectra;
  std::unique_ptr<FftConvolverGpu> conv;
  std::unique_ptr<ScaleKernels> scales;  // null on the leader's block
  std::unique_ptr<cuda::Event> done;     // on this block's device

  float* residual(std::size_t j) { return residuals.data() + j * n; }
  float* model(std::size_t j) { return models.data() + j * n; }
  float* delta(std::size_t j) { return deltas.data() + j * n; }
  void convolve_into(ScaleImagesGpu& leader, std::size_t scale, const float* image, float* out) {
    if (scales) scales->convolve_into(scale, image, out);
    else leader.convolve_into(scale, image, out);
  }
  void spread(ScaleImagesGpu& leader, std::size_t scale, float* delta_image, float* model_image) {
    if (scales) scales->spread(scale, delta_image, model_image);
    else leader.spread(scale, delta_image, model_image);
  }
};

JoinedSplitGpu::JoinedSplitGpu(GpuResources& resources, const JoinedPlanes& planes,
                               const std::vector<CleanScale>& scales, std::size_t width, std::size_t height,
                               std::size_t max_members)
    : resources_(resources),
      s_(resources.stream()),
      leader_(resources.device()),
      planes_(planes),
      width_(width),
      height_(height),
      n_(width * height),
      link_(planes.split_gpus) {
  const std::size_t np = planes.planes.size(), g = planes.split_gpus.size();
  if (g < 2 || g > np)
    throw InvalidSettings("a joined group of " + std::to_string(np) + " planes cannot be split over " +
                          std::to_string(g) + " GPUs; give 2 to " + std::to_string(np) + ".");
  if (planes.split_gpus.front() != leader_)
    throw InvalidSettings("a split joined run must run on its first GPU (" + std::to_string(planes.split_gpus.front()) +
                          "), not on GPU " + std::to_string(leader_) + ".");
  if (planes.device_planes > 0 && planes.device_planes < np)
    throw InvalidSettings("a joined group is either split over GPUs or streamed through one, not both.");
  const std::size_t psf_size = planes.planes.front().psf->image.size();
  const std::size_t members = std::max<std::size_t>(max_members, 1);
  d_psf_ = cuda::DeviceBuffer<float>(psf_size, s_);
  inputs_.emplace(resources, planes, scales, max_members, d_psf_.data(), nullptr);
  const std::vector<float> w = integration_weights(planes);

  for (std::size_t k = 0, first = 0; k < g; ++k) {
    auto b = std::make_unique<Block>();
    b->device = planes.split_gpus[k];
    b->first = first;
    b->count = np / g + (k < np % g ? 1 : 0);  // balanced by count, the larger blocks first
    first += b->count;
    b->n = n_;
    const cuda::ScopedDevice on(b->device);
    if (k > 0) b->own = std::make_unique<GpuResources>();
    b->res = k > 0 ? b->own.get() : &resources;
    b->s = b->res->stream();
    const cudaStream_t s = b->s;
    b->residuals = cuda::DeviceBuffer<float>(b->count * n_, s);
    b->models = cuda::DeviceBuffer<float>(b->count * n_, s);
    b->deltas = cuda::DeviceBuffer<float>(b->count * n_, s);
    b->members = cuda::DeviceBuffer<float>(members * b->count, s);
    b->pixels = cuda::DeviceBuffer<std::uint32_t>(members, s);
    b->mask = cuda::DeviceBuffer<std::uint8_t>(n_, s);
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(b->mask.data(), 1, n_, s));
    if (k > 0) b->acc = cuda::DeviceBuffer<float>(n_, s);  // the leader's block sums into the state's residual
    b->iweights = cuda::DeviceBuffer<float>(b->count, s);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(b->iweights.data(), w.data() + b->first, b->count * sizeof(float),
                                      cudaMemcpyHostToDevice, s));
    b->d_psf = cuda::DeviceBuffer<float>(psf_size, s);
    for (std::size_t j = 0; j < b->count; ++j) {
      const CleanPlane& plane = planes.planes[b->first + j];
      const PreparedPsf& psf = *plane.psf;
      cuda::upload(b->res->staging(), s, b->d_psf.data(), psf.image.pixels.data(), psf.image.size());
      b->spectra.push_back(kernel_spectrum(b->res->plans(), s, s, b->d_psf.data(), psf.image.width, psf.image.height,
                                           psf.peak_x, psf.peak_y, width, height));
      // The next upload reuses d_psf: the transform must have read it.
      GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));
      cuda::upload(b->res->staging(), s, b->residual(j), plane.dirty->pixels.data(), n_);
    }
    GPUCLEAN_CUDA_TRY(cudaMemsetAsync(b->models.data(), 0, b->count * n_ * sizeof(float), s));
    b->conv = std::make_unique<FftConvolverGpu>(b->res->plans(), s, b->spectra.front());
    if (k > 0) b->scales = std::make_unique<ScaleKernels>(*b->res, s, scales, width, height);
    b->done = std::make_unique<cuda::Event>();
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s));  // the host copies above are pageable and local
    blocks_.push_back(std::move(b));
  }
  for (const auto& b : blocks_) {
    lead_members_.emplace_back(members * b->count, s_);
    lead_rows_.emplace_back();
  }
  GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(s_));
}

JoinedSplitGpu::~JoinedSplitGpu() {
  // Each block's buffers are freed on its stream, under its device, after its work; its own
  // resources (stream, plans) go last.
  for (auto& b : blocks_) {
    const cuda::ScopedDevice on(b->device);
    GPUCLEAN_CUDA_TRY_NO_THROW(cudaStreamSynchronize(b->s));
    b.reset();
  }
}

std::size_t JoinedSplitGpu::bytes_needed(std::size_t planes, std::size_t gpus, std::size_t width,
                                         std::size_t height, std::size_t psf_width, std::size_t psf_height,
                                         const std::vector<std::size_t>& patches, std::size_t max_members,
                                         std::size_t max_components) {
  const std::size_t n = width * height, f = sizeof(float);
  const std::size_t block = (planes + std::max<std::size_t>(gpus, 1) - 1) / std::max<std::size_t>(gpus, 1);
  const std::size_t spectrum =
      FftConvolverGpu::spectrum_bytes(psf_width, psf_height, psf_width / 2, psf_height / 2, width, height);
  std::size_t bytes = block * (3 * n * f + spectrum);  // the block's residuals, models, deltas, PSF spectra
  bytes += FftConvolverGpu::bytes_needed(psf_width, psf_height, psf_width / 2, psf_height / 2, width, height) -
           spectrum;                                   // its convolver's buffer and work area
  bytes += 4 * psf_width * psf_height * f;             // a PSF (twice: the block's, the leader's), once and twice convolved
  bytes += n + max_members * (block * f + 4);          // the block's mask, members' values and pixels
  bytes += max_members * planes * f;                   // the leader's staging of the members' values
  // The leader's staging of the cycle's plane fluxes (at most the components').
  bytes += std::min<std::size_t>(max_components, std::size_t{1} << 24) * planes * f;
  return bytes + JoinedMinorInputs::bytes_needed(planes, patches, max_members, max_components);
}

std::string JoinedSplitGpu::describe() const {
  std::string out;
  for (const auto& b : blocks_) {
    if (!out.empty()) out += ", ";
    out += "planes " + std::to_string(b->first) + "-" + std::to_string(b->first + b->count - 1) + " on GPU " +
           std::to_string(b->device);
  }
  return out + " (" + link_.describe() + ")";
}

void JoinedSplitGpu::gather(std::size_t scale, ScaleImagesGpu& scale_images, const std::uint32_t* pixels,
                            std::uint32_t count) {
  const std::size_t np = planes_.planes.size();
  const bool delta_scale = scale_images.is_delta(scale);
  // The pixels are chosen and the last step's copies out of the staging are done.
  go_.record(s_);
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    Block& b = *blocks_[k];
    const cuda::ScopedDevice on(b.device);
    go_.wait_on(b.s);
    PeerLink::copy(b.pixels.data(), b.device, pixels, leader_, count * sizeof(std::uint32_t), b.s);
    for (std::size_t j = 0; j < b.count; ++j) {
      const float* image = b.residual(j);
      if (!delta_scale) {  // the delta buffer is free until subtract() zeroes it
        b.convolve_into(scale_images, scale, image, b.delta(j));
        image = b.delta(j);
      }
      gather_plane(b.s, image, b.pixels.data(), count, static_cast<int>(b.count), static_cast<int>(j),
                   b.members.data());
    }
    PeerLink::copy(lead_members_[k].data(), leader_, b.members.data(), b.device, count * b.count * sizeof(float), b.s);
    b.done->record(b.s);
  }
  // Each block's values into its columns of the members' values.
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    const Block& b = *blocks_[k];
    b.done->wait_on(s_);
    if (count > 0)
      GPUCLEAN_CUDA_TRY(cudaMemcpy2DAsync(inputs_->member_values() + b.first, np * sizeof(float),
                                          lead_members_[k].data(), b.count * sizeof(float), b.count * sizeof(float),
                                          count, cudaMemcpyDeviceToDevice, s_));
  }
}

void JoinedSplitGpu::subtract(std::size_t scale, ScaleImagesGpu& scale_images, const MinorCycleEngine& engine,
                              std::size_t first, GpuImageState& st) {
  const bool delta_scale = scale_images.is_delta(scale);
  const MinorCycleEngine::LastCycle cycle = engine.last_cycle();
  const std::size_t made = cycle.made;
  // Each block's rows of the cycle's plane fluxes, made contiguous on the leader.
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    const Block& b = *blocks_[k];
    grow(lead_rows_[k], std::max<std::size_t>(b.count * made, 1), s_);
    if (made > 0)
      GPUCLEAN_CUDA_TRY(cudaMemcpy2DAsync(lead_rows_[k].data(), made * sizeof(float),
                                          inputs_->comp_fluxes(b.first, first), inputs_->comp_stride() * sizeof(float),
                                          made * sizeof(float), b.count, cudaMemcpyDeviceToDevice, s_));
  }
  go_.record(s_);
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    Block& b = *blocks_[k];
    const cuda::ScopedDevice on(b.device);
    go_.wait_on(b.s);
    grow(b.records, std::max<std::size_t>(2 * made, 1), b.s);
    grow(b.rows, std::max<std::size_t>(b.count * made, 1), b.s);
    const std::size_t u32 = sizeof(std::uint32_t);
    PeerLink::copy(b.records.data(), b.device, cycle.pixel_sorted, leader_, made * u32, b.s);
    PeerLink::copy(b.records.data() + made, b.device, cycle.rank_sorted, leader_, made * u32, b.s);
    PeerLink::copy(b.rows.data(), b.device, lead_rows_[k].data(), leader_, b.count * made * sizeof(float), b.s);
    for (std::size_t j = 0; j < b.count; ++j) {
      GPUCLEAN_CUDA_TRY(cudaMemsetAsync(b.delta(j), 0, n_ * sizeof(float), b.s));
      sum_per_pixel(b.s, b.records.data(), b.records.data() + made, cycle.made, b.rows.data() + j * made, b.delta(j),
                    delta_scale ? b.model(j) : nullptr);
      if (!delta_scale) b.spread(scale_images, scale, b.delta(j), b.model(j));
      b.conv->set_spectrum(b.spectra[j]);
      b.conv->convolve(b.delta(j));
      // The delta is spent once convolved: its buffer takes the masked copy nobody reads.
      b.conv->subtract_from(b.residual(j), b.mask.data(), b.delta(j));
    }
  }
  integrate(st);
}

void JoinedSplitGpu::integrate(GpuImageState& st) {
  const bool pol = planes_.join == Join::kPolarizations;
  // Block 0 (the leader's) starts the sum in the state's residual; each next block continues
  // from the last one's, so every pixel adds its planes in plane order, as on one GPU.
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    Block& b = *blocks_[k];
    const cuda::ScopedDevice on(b.device);
    float* acc = k == 0 ? st.residual() : b.acc.data();
    if (k > 0) {
      const Block& prev = *blocks_[k - 1];
      prev.done->wait_on(b.s);
      PeerLink::copy(acc, b.device, k == 1 ? st.residual() : prev.acc.data(), prev.device, n_ * sizeof(float), b.s);
    }
    accumulate_planes(b.s, b.residuals.data(), static_cast<int>(b.count), n_, pol, b.iweights.data(), k == 0, acc);
    b.done->record(b.s);
  }
  const Block& last = *blocks_.back();
  last.done->wait_on(s_);
  PeerLink::copy(st.residual(), leader_, last.acc.data(), last.device, n_ * sizeof(float), s_);
  finish_integration(s_, st.residual(), n_, pol, st.mask(), st.residual(), st.masked());
}

void JoinedSplitGpu::set_residuals(const std::vector<const float*>& planes, GpuImageState& st) {
  const std::size_t np = planes_.planes.size();
  if (planes.size() != np)
    throw InvalidInput("a residual for " + std::to_string(np) + " joined planes came with " +
                       std::to_string(planes.size()) + "; give one per plane.");
  go_.record(s_);  // the leader's last reads of the blocks are done
  for (auto& b : blocks_) {
    const cuda::ScopedDevice on(b->device);
    go_.wait_on(b->s);
    for (std::size_t j = 0; j < b->count; ++j)
      cuda::upload(b->res->staging(), b->s, b->residual(j), planes[b->first + j], n_);
  }
  integrate(st);
  st.residual_changed();
}

std::vector<HostImage> JoinedSplitGpu::images(bool models) {
  std::vector<HostImage> out;
  go_.record(s_);
  for (auto& b : blocks_) {
    const cuda::ScopedDevice on(b->device);
    go_.wait_on(b->s);
    for (std::size_t j = 0; j < b->count; ++j) {
      out.emplace_back(width_, height_);
      cuda::download(b->res->staging(), b->s, out.back().pixels.data(), models ? b->model(j) : b->residual(j), n_);
    }
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(b->s));
  }
  return out;
}

void JoinedSplitGpu::finish(const PixelGaussian* beam, CleanResult& result) {
  result.images.planes.resize(planes_.planes.size());
  go_.record(s_);
  for (auto& b : blocks_) {
    const cuda::ScopedDevice on(b->device);
    go_.wait_on(b->s);
    // Restored planes go into the block's delta buffers, free now.
    PlaneRestorer restorer(*b->res, b->s, width_, height_);
    for (std::size_t j = 0; j < b->count; ++j) {
      const std::size_t p = b->first + j;
      const PixelGaussian* pb = planes_.planes[p].restoring_beam ? planes_.planes[p].restoring_beam : beam;
      restorer.restore(pb, b->model(j), b->residual(j), b->delta(j), result.images.planes[p]);
    }
    GPUCLEAN_CUDA_TRY(cudaStreamSynchronize(b->s));
  }
  inputs_->finish(result.stop.iterations, result);
}

}  // namespace gpuclean::clean::gpu

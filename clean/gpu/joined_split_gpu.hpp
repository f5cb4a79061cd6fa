#pragma once
// A joined run's planes split over several GPUs of one process (JoinedPlanes::split_gpus), for
// a group too large for one GPU; the result is JoinedPlanesGpu's, bit for bit.
//
// The planes are cut into contiguous blocks in plane order, one per entry of split_gpus. Each
// block's GPU holds its planes' residuals, models, deltas and PSF spectra, its own PSF convolver
// and scale kernels. The leader (split_gpus[0], the device the run is on; its block is the
// first) also holds what the minor cycle reads: the integrated image (GpuImageState), the
// patches, weights and fit, the members' plane values and every component's plane fluxes
// (JoinedMinorInputs). Each step:
//   gather:   every GPU gets the active pixels, gathers its planes' values and copies them into
//             its columns of the leader's member values; the leader's minor cycle runs on them;
//   subtract: every GPU gets the cycle's components (MinorCycleEngine::last_cycle) and its rows
//             of their plane fluxes, and subtracts its planes through their PSFs, the GPUs at
//             once; then the integrated image is summed along a chain in plane order (block 0
//             starts it, each next block continues from the last one's sum), which is the one
//             GPU's per-pixel order (accumulate_planes), so the same floats.
// Copies and their order across GPUs: PeerLink (no NCCL). Two blocks may share one GPU
// ({0, 0}): the copies are then device copies, which is how the tests check all of it on one.

#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/gpu/gpu_image_state.hpp"
#include "clean/gpu/gpu_resources.hpp"
#include "clean/gpu/joined_common_gpu.hpp"
#include "clean/gpu/minor_engine.hpp"
#include "clean/gpu/peer_link.hpp"
#include "clean/gpu/scale_images_gpu.hpp"
#include "clean/scale_set.hpp"
#include "select/cuda/device_buffer.hpp"
#include "select/cuda/event.hpp"

namespace gpuclean::clean::gpu {

class JoinedSplitGpu {
 public:
  /// As JoinedPlanesGpu's; `resources` are the leader's, on planes.split_gpus[0] (else
  /// InvalidSettings). Streaming (JoinedPlanes::device_planes) is not combined with a split.
  JoinedSplitGpu(GpuResources& resources, const JoinedPlanes& planes, const std::vector<CleanScale>& scales,
                 std::size_t width, std::size_t height, std::size_t max_members);
  ~JoinedSplitGpu();
  JoinedSplitGpu(const JoinedSplitGpu&) = delete;
  JoinedSplitGpu& operator=(const JoinedSplitGpu&) = delete;

  // JoinedPlanesGpu's interface, with its meaning.
  float sidelobe(std::size_t scale) const { return inputs_->sidelobe(scale); }
  void reserve_components(std::size_t used, std::size_t more) { inputs_->reserve_components(used, more); }
  void gather(std::size_t scale, ScaleImagesGpu& scale_images, const std::uint32_t* pixels, std::uint32_t count);
  JoinedMinorRequest request(std::size_t scale, std::size_t first) { return inputs_->request(scale, first); }
  void subtract(std::size_t scale, ScaleImagesGpu& scale_images, const MinorCycleEngine& engine, std::size_t first,
                GpuImageState& st);
  void set_residuals(const std::vector<const float*>& planes, GpuImageState& st);
  std::vector<HostImage> model_images() { return images(true); }
  std::vector<HostImage> residual_images() { return images(false); }
  void finish(const PixelGaussian* beam, CleanResult& result);

  /// "planes 0-3 on GPU 0, 4-7 on GPU 1 (peer access)", for the log.
  std::string describe() const;

  /// Device bytes on the leader, the most of any of the GPUs (a block's planes, its PSF
  /// convolver, the chain's sum and the staging of the copies, and JoinedMinorInputs'), for
  /// `planes` planes over `gpus` GPUs; the rest as JoinedPlanesGpu::bytes_needed. The other GPUs'
  /// scale kernels are no more than the leader's scale images (counted with the algorithm).
  static std::size_t bytes_needed(std::size_t planes, std::size_t gpus, std::size_t width, std::size_t height,
                                  std::size_t psf_width, std::size_t psf_height, const std::vector<std::size_t>& patches,
                                  std::size_t max_members, std::size_t max_components);

 private:
  struct Block;
  std::vector<HostImage> images(bool models);
  /// The integrated image remade from every block's residuals, along the chain, into st.
  void integrate(GpuImageState& st);

  GpuResources& resources_;
  cudaStream_t s_;
  int leader_;
  const JoinedPlanes& planes_;
  std::size_t width_, height_, n_;
  PeerLink link_;
  cuda::DeviceBuffer<float> d_psf_;  // the leader's: each plane's PSF for its patches
  std::optional<JoinedMinorInputs> inputs_;
  std::vector<std::unique_ptr<Block>> blocks_;
  // On the leader, per block: what it copies in (its members' values) and out (its rows of the
  // cycle's plane fluxes).
  std::vector<cuda::DeviceBuffer<float>> lead_members_, lead_rows_;
  cuda::Event go_;  // the leader's point each block waits for
};

}  // namespace gpuclean::clean::gpu

#pragma once
// The VisStore's GPU backend (major-cycle-plan.md §3): each output channel's samples are uploaded,
// sorted and turned into gridding records once, and stay on the device across major cycles with
// the degridded model beside them; the residual's values (data − model, × cw) are made there, so a
// major cycle moves only images over PCIe. When the channels do not all fit the device budget, every
// channel is gridded by invert_gpu/predict_gpu from the host's samples instead (streamed in chunks
// through pinned memory, the model values kept on the host), which gives the same images.
#include <memory>

#include "imaging/gpu/gridder_gpu.hpp"
#include "imaging/vis_store.hpp"

namespace gpuclean::imaging {

/// A backend for VisStore::set_backend on GPU `options.device` within `options.budget_bytes`
/// (0: the free memory less a margin; GPUCLEAN_TEST_IMAGING_BUDGET overrides it, as for the gridder).
std::unique_ptr<VisStoreBackend> make_gpu_vis_store_backend(const GpuGridderOptions& options);

}  // namespace gpuclean::imaging

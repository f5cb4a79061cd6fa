#include "clean/gpu/spectrum_cache.hpp"

#include <algorithm>

#include "select/cuda/cuda_check.hpp"

namespace gpuclean::clean::gpu {

Spectrum::Spectrum(const PaddedLayout& layout, cudaStream_t compute, cudaStream_t release)
    : layout_(layout), count_(layout.ph * (layout.pw / 2 + 1)), release_(release) {
  GPUCLEAN_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&data_), bytes(), compute));
  // Until the transform is marked, the release stream at least waits for the allocation.
  ready_.record(compute);
}

Spectrum::~Spectrum() {
  // Freed in the release stream's order, after the transform, whose stream never reads it again.
  GPUCLEAN_CUDA_TRY_NO_THROW(cudaStreamWaitEvent(release_, ready_.get(), 0));
  GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeAsync(data_, release_));
}

std::shared_ptr<const Spectrum> SpectrumCache::find(const SpectrumKey& key) {
  const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == key; });
  if (it == entries_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  entries_.splice(entries_.begin(), entries_, it);
  return entries_.front().second;
}

void SpectrumCache::make_room() {
  while (entries_.size() >= capacity_) entries_.pop_back();
}

void SpectrumCache::insert(const SpectrumKey& key, std::shared_ptr<const Spectrum> spectrum) {
  make_room();
  entries_.emplace_front(key, std::move(spectrum));
}

}  // namespace gpuclean::clean::gpu

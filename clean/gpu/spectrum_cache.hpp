#pragma once
// Kernel spectra kept across runs: a batch whose observations share a PSF (or a restoring beam)
// and an image size transforms it once. Entries are keyed by what the kernel holds (a PSF's
// 128-bit content hash computed on the device, or a Gaussian's covariance bits), its grid and
// zero offset, and the image size; all of it must match. A hash collision would silently
// subtract the wrong PSF, hence 128 bits and the exact comparison of everything else.

#include <cufft.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>

#include "clean/gpu/clean_kernels.hpp"
#include "select/cuda/event.hpp"

namespace gpuclean::clean::gpu {

/// A kernel's transform scaled by 1 / (pw ph) (cuFFT's inverse is unnormalised), in the padded
/// layout of the images it convolves. Computed on one stream and read on another: readers call
/// wait_ready() on their stream first.
class Spectrum {
 public:
  /// Room for layout.ph x (layout.pw / 2 + 1) values, in stream order on `compute`, which is to
  /// transform into it; freed in stream order on `release` once the transform is done.
  Spectrum(const PaddedLayout& layout, cudaStream_t compute, cudaStream_t release);
  ~Spectrum();
  Spectrum(const Spectrum&) = delete;
  Spectrum& operator=(const Spectrum&) = delete;

  const PaddedLayout& layout() const { return layout_; }
  std::size_t count() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(cufftComplex); }
  cufftComplex* data() { return data_; }
  const cufftComplex* data() const { return data_; }

  /// Marks the transform enqueued so far on `stream` (the compute stream) as the contents.
  void mark_ready(cudaStream_t stream) { ready_.record(stream); }
  /// Work enqueued on `stream` from now on sees the contents. No host wait.
  void wait_ready(cudaStream_t stream) const { ready_.wait_on(stream); }

 private:
  PaddedLayout layout_;
  std::size_t count_ = 0;
  cufftComplex* data_ = nullptr;
  cudaStream_t release_ = nullptr;
  cuda::Event ready_;
};

struct SpectrumKey {
  std::array<std::uint64_t, 3> content{};  ///< PSF: content hash (2 words); Gaussian: cxx, cxy, cyy bits
  std::size_t kernel_width = 0, kernel_height = 0;
  std::size_t cx = 0, cy = 0;              ///< the kernel's zero offset (the PSF's peak)
  std::size_t width = 0, height = 0;       ///< the images it convolves
  bool operator==(const SpectrumKey&) const = default;
};

/// Least recently used spectra, at most capacity() of them. Not thread-safe (one per
/// GpuResources). An entry dropped while a convolver still holds it lives until released.
class SpectrumCache {
 public:
  explicit SpectrumCache(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  /// The entry for `key` (now the most recently used), or null.
  std::shared_ptr<const Spectrum> find(const SpectrumKey& key);
  /// Drops least recently used entries until one more fits: call before making a new one, so
  /// that the device holds at most capacity() of them.
  void make_room();
  void insert(const SpectrumKey& key, std::shared_ptr<const Spectrum> spectrum);

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const { return entries_.size(); }
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

 private:
  std::size_t capacity_;
  std::list<std::pair<SpectrumKey, std::shared_ptr<const Spectrum>>> entries_;  // most recent first
  std::size_t hits_ = 0, misses_ = 0;
};

}  // namespace gpuclean::clean::gpu

#include "select/cuda/pinned_staging.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace gpuclean::cuda {
namespace {

// The host side of a chunk: one thread copies pageable memory at about 6-10 GB/s, below what
// the DMA engine takes, and touches fresh pages (a new result image) one fault at a time. Large
// chunks are copied by up to 8 threads.
void chunk_copy(void* dst, const void* src, std::size_t len) {
  const int parts = static_cast<int>(std::clamp<std::size_t>(len >> 20, 1, 8));
  if (parts == 1) {
    std::memcpy(dst, src, len);
    return;
  }
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int p = 0; p < parts; ++p) {
    const std::size_t a = len * static_cast<std::size_t>(p) / static_cast<std::size_t>(parts);
    const std::size_t b = len * static_cast<std::size_t>(p + 1) / static_cast<std::size_t>(parts);
    std::memcpy(d + a, s + a, b - a);
  }
}

}  // namespace

PinnedStaging::PinnedStaging(std::size_t chunk_bytes) : chunk_(chunk_bytes) {
  if (chunk_ == 0) throw std::invalid_argument("PinnedStaging: the chunk size must be positive");
  try {
    for (Slot& s : slots_) GPUCLEAN_CUDA_TRY(cudaMallocHost(&s.host, chunk_));
  } catch (...) {
    for (Slot& s : slots_)
      if (s.host) GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeHost(s.host));
    throw;
  }
}

PinnedStaging::~PinnedStaging() {
  for (Slot& s : slots_) {
    // A chunk may still be read by an upload's last DMA.
    GPUCLEAN_CUDA_TRY_NO_THROW(cudaEventSynchronize(s.done.get()));
    GPUCLEAN_CUDA_TRY_NO_THROW(cudaFreeHost(s.host));
  }
}

void PinnedStaging::upload(cudaStream_t stream, void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* h = static_cast<const char*>(src);
  std::size_t i = 0;
  for (std::size_t offset = 0; offset < bytes; offset += chunk_, ++i) {
    const std::size_t len = std::min(chunk_, bytes - offset);
    Slot& s = slot(i);
    s.done.synchronize();  // its previous DMA has read it (or, after a download, written it)
    chunk_copy(s.host, h + offset, len);
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(d + offset, s.host, len, cudaMemcpyHostToDevice, stream));
    s.done.record(stream);
  }
  first_ += i;
}

void PinnedStaging::download(cudaStream_t stream, void* dst, const void* src, std::size_t bytes) {
  auto* h = static_cast<char*>(dst);
  const auto* d = static_cast<const char*>(src);
  const std::size_t chunks = (bytes + chunk_ - 1) / chunk_;
  const auto issue = [&](std::size_t i) {
    const std::size_t offset = i * chunk_, len = std::min(chunk_, bytes - offset);
    Slot& s = slot(i);
    s.done.synchronize();  // an earlier upload's DMA may still read it
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(s.host, d + offset, len, cudaMemcpyDeviceToHost, stream));
    s.done.record(stream);
  };
  // Two DMAs in flight; the host empties chunk i while chunk i + 1 arrives in the other.
  for (std::size_t i = 0; i < std::min<std::size_t>(chunks, 2); ++i) issue(i);
  for (std::size_t i = 0; i < chunks; ++i) {
    const std::size_t offset = i * chunk_, len = std::min(chunk_, bytes - offset);
    Slot& s = slot(i);
    s.done.synchronize();
    chunk_copy(h + offset, s.host, len);
    if (i + 2 < chunks) issue(i + 2);
  }
  first_ += chunks;
}

}  // namespace gpuclean::cuda

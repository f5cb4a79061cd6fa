#include "clean/gpu/peer_link.hpp"

#include "select/cuda/cuda_check.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::clean::gpu {

PeerLink::PeerLink(const std::vector<int>& devices) {
  for (int a : devices) {
    for (int b : devices) {
      if (a == b) continue;
      int can = 0;
      GPUCLEAN_CUDA_TRY(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) {
        direct_ = false;
        continue;
      }
      const cuda::ScopedDevice on(a);
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();  // not an error here: clear it so later checks do not see it
      } else {
        GPUCLEAN_CUDA_TRY(e);
      }
      // Stream-ordered allocations (DeviceBuffer) do not follow peer access: a is given access
      // to the pool b allocates from too, so that copies between them go directly.
      cudaMemPool_t pool = nullptr;
      GPUCLEAN_CUDA_TRY(cudaDeviceGetMemPool(&pool, b));
      cudaMemAccessDesc access{};
      access.location.type = cudaMemLocationTypeDevice;
      access.location.id = a;
      access.flags = cudaMemAccessFlagsProtReadWrite;
      GPUCLEAN_CUDA_TRY(cudaMemPoolSetAccess(pool, &access, 1));
    }
  }
}

std::string PeerLink::describe() const { return direct_ ? "peer access" : "copies staged through the host"; }

void PeerLink::copy(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes,
                    cudaStream_t stream) {
  if (bytes == 0) return;
  if (dst_device == src_device)
    GPUCLEAN_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  else
    GPUCLEAN_CUDA_TRY(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, stream));
}

}  // namespace gpuclean::clean::gpu

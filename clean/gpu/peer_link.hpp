#pragma once
// Copies between the GPUs of one process, and their order across the GPUs' streams, without NCCL
// (Debian 12 does not package it): peer access where a pair of devices allows it
// (cudaDeviceEnablePeerAccess), else cudaMemcpyPeerAsync, which the driver stages through the
// host. Both give the same bytes; only the rate differs. Two "devices" may be one GPU (a split
// run's tests use {0, 0}): the copy is then an ordinary device-to-device one.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

namespace gpuclean::clean::gpu {

class PeerLink {
 public:
  /// Enables peer access between every pair of distinct devices of `devices` where it is
  /// possible (it stays on for the process: other runs may use it too).
  explicit PeerLink(const std::vector<int>& devices);

  /// True when every pair of distinct devices reads the other directly.
  bool direct() const { return direct_; }
  /// "peer access" or "copies staged through the host" (for the log).
  std::string describe() const;

  /// `bytes` from `src` on src_device to `dst` on dst_device, enqueued on `stream` (of either
  /// device; the current device must be the stream's).
  static void copy(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes,
                   cudaStream_t stream);

 private:
  bool direct_ = true;
};

}  // namespace gpuclean::clean::gpu

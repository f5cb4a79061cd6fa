#pragma once
// Error checks for CUDA calls: each call is checked once, and a failure throws CudaError naming
// the call, the file and the line. Host-compilable (no device code).

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gpuclean::cuda {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const noexcept { return code_; }
  bool out_of_memory() const noexcept { return code_ == cudaErrorMemoryAllocation; }

 private:
  cudaError_t code_;
};

namespace detail {
inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear a sticky launch error so the next call starts clean
  throw CudaError(err, std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}
}  // namespace detail

}  // namespace gpuclean::cuda

#define GPUCLEAN_CUDA_TRY(call) ::gpuclean::cuda::detail::check((call), #call, __FILE__, __LINE__)

/// For destructors: reports and swallows.
#define GPUCLEAN_CUDA_TRY_NO_THROW(call)                                                   \
  do {                                                                                     \
    const cudaError_t gpuclean_err_ = (call);                                              \
    if (gpuclean_err_ != cudaSuccess) cudaGetLastError();                                  \
  } while (0)

#ifdef GPUCLEAN_SYNC_CHECKS
#define GPUCLEAN_CHECK_LAUNCH()                    \
  do {                                             \
    GPUCLEAN_CUDA_TRY(cudaGetLastError());         \
    GPUCLEAN_CUDA_TRY(cudaDeviceSynchronize());    \
  } while (0)
#else
#define GPUCLEAN_CHECK_LAUNCH() GPUCLEAN_CUDA_TRY(cudaGetLastError())
#endif

#include "imaging/gpu/fft_plan_pool.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "select/cuda/cuda_check.hpp"
#include "select/cuda/device_info.hpp"

namespace gpuclean::imaging::gpu {
namespace {

// Plans kept idle per device: dirty+PSF and predict, two sizes (per device, so `gpuclean image` over
// 8 GPUs keeps each GPU's plan instead of destroying and remaking them in turn).
constexpr std::size_t kPoolSize = 4;

void check(cufftResult r, const char* what) {
  if (r == CUFFT_SUCCESS) return;
  if (r == CUFFT_ALLOC_FAILED)
    throw cuda::CudaError(cudaErrorMemoryAllocation, std::string(what) + ": cuFFT could not allocate GPU memory");
  throw std::runtime_error(std::string(what) + " failed: cuFFT error " + std::to_string(static_cast<int>(r)));
}

struct Idle {
  int device;
  std::size_t nu, nv;
  int batch;
  cufftHandle handle;
  std::size_t work;
};

struct Pool {
  std::mutex mutex;
  std::vector<Idle> idle;  // oldest first
};

// Never destroyed: cuFFT must not be called from static destructors after the runtime is gone.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

// Rare (the pool is full); waits for the device so no queued transform still uses the plan.
void destroy(const Idle& e) noexcept {
  try {
    cuda::ScopedDevice device(e.device);
    GPUCLEAN_CUDA_TRY_NO_THROW(cudaDeviceSynchronize());
    cufftDestroy(e.handle);
  } catch (...) {
    // The device is gone; nothing left to free.
  }
}

}  // namespace

FftPlanLease::FftPlanLease(std::size_t nu, std::size_t nv, int batch)
    : device_(cuda::current_gpu()), nu_(nu), nv_(nv), batch_(batch) {
  {
    std::lock_guard lock(pool().mutex);
    auto& idle = pool().idle;
    for (auto it = idle.begin(); it != idle.end(); ++it)
      if (it->device == device_ && it->nu == nu && it->nv == nv && it->batch == batch) {
        handle_ = it->handle;
        work_bytes_ = it->work;
        idle.erase(it);
        return;
      }
  }
  check(cufftCreate(&handle_), "cufftCreate");
  try {
    check(cufftSetAutoAllocation(handle_, 0), "cufftSetAutoAllocation");
    long long n[2] = {static_cast<long long>(nv), static_cast<long long>(nu)};
    const long long dist = n[0] * n[1];
    check(cufftMakePlanMany64(handle_, 2, n, nullptr, 1, dist, nullptr, 1, dist, CUFFT_C2C, batch, &work_bytes_),
          "cufftMakePlanMany64 (gridder planes)");
  } catch (...) {
    cufftDestroy(handle_);
    throw;
  }
}

FftPlanLease::~FftPlanLease() {
  if (!handle_) return;
  std::lock_guard lock(pool().mutex);
  auto& idle = pool().idle;
  idle.push_back({device_, nu_, nv_, batch_, handle_, work_bytes_});
  const int device = device_;
  const auto same = [device](const Idle& e) { return e.device == device; };
  if (static_cast<std::size_t>(std::count_if(idle.begin(), idle.end(), same)) > kPoolSize) {
    const auto oldest = std::find_if(idle.begin(), idle.end(), same);
    destroy(*oldest);
    idle.erase(oldest);
  }
}

void FftPlanLease::bind(cudaStream_t stream, void* work) {
  check(cufftSetStream(handle_, stream), "cufftSetStream");
  check(cufftSetWorkArea(handle_, work), "cufftSetWorkArea");
}

void FftPlanLease::forward(float2* data) { check(cufftExecC2C(handle_, data, data, CUFFT_FORWARD), "cufftExecC2C"); }
void FftPlanLease::inverse(float2* data) { check(cufftExecC2C(handle_, data, data, CUFFT_INVERSE), "cufftExecC2C"); }

}  // namespace gpuclean::imaging::gpu

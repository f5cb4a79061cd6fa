#include "clean/gpu/fft_plan_cache.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace gpuclean::clean::gpu {

void check_cufft(cufftResult r, const char* what) {
  if (r == CUFFT_SUCCESS) return;
  if (r == CUFFT_ALLOC_FAILED)
    throw cuda::CudaError(cudaErrorMemoryAllocation, std::string(what) + ": cuFFT could not allocate GPU memory");
  throw std::runtime_error(std::string(what) + " failed: cuFFT error " + std::to_string(static_cast<int>(r)));
}

FftPlans::~FftPlans() {
  if (forward) cufftDestroy(forward);
  if (inverse) cufftDestroy(inverse);
}

std::shared_ptr<FftPlans> FftPlanCache::get(cudaStream_t stream, std::size_t pw, std::size_t ph) {
  auto it = std::find_if(plans_.begin(), plans_.end(), [&](const auto& p) { return p->pw == pw && p->ph == ph; });
  if (it != plans_.end()) {
    plans_.splice(plans_.begin(), plans_, it);
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    if (plans_.size() >= kCapacity) plans_.pop_back();
    FftPlans& p = *plans_.emplace_front(std::make_shared<FftPlans>());
    p.pw = pw;
    p.ph = ph;
    try {
      check_cufft(cufftCreate(&p.forward), "cufftCreate");
      check_cufft(cufftCreate(&p.inverse), "cufftCreate");
      // Our work area comes from the stream-ordered pool, so it is reused like every buffer.
      check_cufft(cufftSetAutoAllocation(p.forward, 0), "cufftSetAutoAllocation");
      check_cufft(cufftSetAutoAllocation(p.inverse, 0), "cufftSetAutoAllocation");
      std::size_t a = 0, b = 0;
      check_cufft(cufftMakePlan2d(p.forward, static_cast<int>(ph), static_cast<int>(pw), CUFFT_R2C, &a),
                  "cufftMakePlan2d (R2C)");
      check_cufft(cufftMakePlan2d(p.inverse, static_cast<int>(ph), static_cast<int>(pw), CUFFT_C2R, &b),
                  "cufftMakePlan2d (C2R)");
      p.work = cuda::DeviceBuffer<std::byte>(std::max<std::size_t>({a, b, 1}), stream);
      for (cufftHandle h : {p.forward, p.inverse}) check_cufft(cufftSetWorkArea(h, p.work.data()), "cufftSetWorkArea");
    } catch (...) {
      plans_.pop_front();
      throw;
    }
    ++made_;
    seconds_making_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const std::shared_ptr<FftPlans>& p = plans_.front();
  for (cufftHandle h : {p->forward, p->inverse}) check_cufft(cufftSetStream(h, stream), "cufftSetStream");
  return p;
}

}  // namespace gpuclean::clean::gpu

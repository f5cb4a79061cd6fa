#pragma once
// Image-wide GPU passes used by GPU CLEAN (kernels in clean_kernels.cu). C++17 and CUDA only:
// the orchestration that calls them lives in .cpp files. Images are row-major, width x height.
// "masked" is the residual with NaN outside the clean mask: every peak and selection reads it.

#include <cuda_runtime.h>
#include <cufft.h>

#include <cstddef>
#include <cstdint>

namespace gpuclean::clean::gpu {

/// masked[i] = mask[i] ? residual[i] : NaN.
void apply_mask(cudaStream_t s, const float* residual, const std::uint8_t* mask, float* masked, std::size_t n);

/// *peak = the packed peak (packed_peak.hpp) of the non-NaN pixels of `masked`, with key |x|
/// (abs_key) or x; 0 when there is none. *peak must be zero on entry (it is atomically maxed).
void find_peak(cudaStream_t s, const float* masked, std::size_t n, bool abs_key, unsigned long long* peak);

/// *count += the number of non-NaN pixels whose key (|x| or x) is above `limit`.
void count_above(cudaStream_t s, const float* masked, std::size_t n, bool abs_key, float limit,
                 unsigned long long* count);

/// Sum of the finite pixels and of their squares, accumulated into sums[0] and sums[1].
void finite_sums(cudaStream_t s, const float* in, std::size_t n, double* sums);

/// Zero-padded FFT layout: `padded` holds ph rows of `pitch` floats (pitch >= pw) of which pw
/// are the transform's real row; in-place R2C needs pitch = 2 (pw / 2 + 1).
struct PaddedLayout {
  std::size_t width = 0, height = 0;  ///< the image
  std::size_t pw = 0, ph = 0;         ///< the transform
  std::size_t pitch = 0;              ///< floats per padded row
};

/// padded = image in the top-left corner, zero elsewhere (whole rows of `pitch` written).
void pad_image(cudaStream_t s, const float* image, const PaddedLayout& l, float* padded);

/// padded = the kernel's offsets d in [d_min, d_max] (per axis) placed at d mod (pw, ph) and
/// scaled by `scale`, zero elsewhere. kernel(cx + dx, cy + dy) is the value at offset d.
struct KernelPlacement {
  const float* kernel = nullptr;
  std::size_t kernel_width = 0;
  std::ptrdiff_t cx = 0, cy = 0;
  std::ptrdiff_t dx_min = 0, dx_max = 0, dy_min = 0, dy_max = 0;
  float scale = 1.0f;
};
void place_kernel(cudaStream_t s, const KernelPlacement& k, const PaddedLayout& l, float* padded);

/// a[i] *= b[i] (complex), i < count.
void multiply_spectra(cudaStream_t s, cufftComplex* a, const cufftComplex* b, std::size_t count);

/// residual -= conv (the top-left width x height of the padded result), then
/// masked = mask ? residual : NaN.
void subtract_convolved(cudaStream_t s, const float* padded, const PaddedLayout& l, float* residual,
                        const std::uint8_t* mask, float* masked);

/// The bits an index below n needs (at least 1, at most 32): radix sorts of pixel indices or
/// cluster labels sort on those alone.
inline int key_bits(std::size_t n) {
  int bits = 1;
  while (bits < 32 && (std::size_t{1} << bits) < n) ++bits;
  return bits;
}

/// The active set in pixel order (Clark's minor cycle finds patch rows by binary search): CUB
/// radix sort of (pixel, value) pairs on the bits that pixel indices below n use.
std::size_t sort_by_pixel_temp_bytes(std::size_t count);
void sort_by_pixel(cudaStream_t s, void* temp, std::size_t temp_bytes, const std::uint32_t* pixels_in,
                   std::uint32_t* pixels_out, const float* values_in, float* values_out, std::size_t count,
                   std::size_t n);

/// out = conv + add (the top-left width x height of the padded result); NaN in `add` stays NaN.
/// A null `add` copies the convolution out.
void add_convolved(cudaStream_t s, const float* padded, const PaddedLayout& l, const float* add, float* out);

/// out = in with NaN replaced by 0 (the scale convolutions' input).
void zero_nan(cudaStream_t s, const float* in, float* out, std::size_t n);

/// masked = the convolution (top-left width x height of the padded result) where mask is set
/// and the pixel is at least `border` from every edge, NaN elsewhere (a scale's search image).
void mask_convolved(cudaStream_t s, const float* padded, const PaddedLayout& l, const std::uint8_t* mask,
                    std::size_t border, float* masked);

/// *count += the number of pixels that are finite (finite_only) or not NaN (+-Inf counted).
void count_valid(cudaStream_t s, const float* in, std::size_t n, bool finite_only, unsigned long long* count);

/// A 128-bit content hash of `words` (n of them), added into hash[0] and hash[1], which must be
/// zero on entry. Each word is mixed with its position (two different 64-bit finalisers of
/// position << 32 | word, each a bijection), and the mixes are summed: the order in which
/// blocks finish does not matter, and any change of a word or of where it sits changes each
/// half like a random 64-bit value. n < 2^32.
void content_hash(cudaStream_t s, const std::uint32_t* words, std::size_t n, unsigned long long* hash);

/// *out = max(*out, the bits of the largest |image| outside the square of half-width hw around
/// (cx, cy)): clean::largest_exterior_sidelobe on the device (non-negative floats order as their
/// bits). The image holds no NaN.
void abs_max_outside(cudaStream_t s, const float* image, std::size_t width, std::size_t height, std::size_t cx,
                     std::size_t cy, std::size_t hw, unsigned long long* out);

/// padded = the elliptical Gaussian exp(-0.5 d^T C^-1 d) at the offsets d in [-half_width,
/// half_width] x [-half_height, half_height], placed at d mod (pw, ph) and scaled by `scale`,
/// zero elsewhere: what place_kernel() makes of clean::gaussian_kernel(), evaluated in the same
/// double-precision steps (no contraction into fused multiply-adds) and rounded to float.
struct GaussianPlacement {
  double cxx = 1.0, cxy = 0.0, cyy = 1.0;
  double det = 1.0;  ///< cxx cyy - cxy^2, as the host computes it
  std::ptrdiff_t half_width = 0, half_height = 0;
  float scale = 1.0f;
};
void place_gaussian(cudaStream_t s, const GaussianPlacement& g, const PaddedLayout& l, float* padded);

}  // namespace gpuclean::clean::gpu

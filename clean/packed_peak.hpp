#pragma once
// A peak candidate packed into 64 bits, so that one atomicMax (or one max over a warp) finds the
// brightest pixel with CLEAN's tie rule: the larger key wins, then the lower pixel index. The
// low bit keeps the sign of the value, so that a |x| key gives back x.
//
//   bits 63..32  the key's bits, mapped so that unsigned order is float order
//   bits 31..1   ~pixel index (31 bits: images below 2^31 pixels)
//   bit 0        1 when the value is negative
// Zero means "no candidate": every real key maps to a non-zero high word.

#include <cstdint>

#include "select/cuda/host_device.hpp"

namespace gpuclean::clean {

inline constexpr unsigned long long kMaxPackedPixels = 1ull << 31;

GPUCLEAN_HD std::uint32_t ordered_bits(float key) {
  std::uint32_t u;
  __builtin_memcpy(&u, &key, 4);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

GPUCLEAN_HD float from_ordered_bits(std::uint32_t o) {
  const std::uint32_t u = (o & 0x80000000u) ? (o & 0x7FFFFFFFu) : ~o;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

GPUCLEAN_HD unsigned long long pack_peak(float key, std::uint32_t pixel, bool negative) {
  // + 0.0f folds -0 into +0: equal keys must tie, as they do in the CPU reference.
  return (static_cast<unsigned long long>(ordered_bits(key + 0.0f)) << 32) |
         (static_cast<unsigned long long>(~pixel & 0x7FFFFFFFu) << 1) | (negative ? 1u : 0u);
}

struct UnpackedPeak {
  float key;
  float value;
  std::uint32_t pixel;
};

GPUCLEAN_HD UnpackedPeak unpack_peak(unsigned long long p, bool abs_key) {
  UnpackedPeak u;
  u.key = from_ordered_bits(static_cast<std::uint32_t>(p >> 32));
  u.pixel = ~static_cast<std::uint32_t>(p >> 1) & 0x7FFFFFFFu;
  u.value = abs_key && (p & 1u) ? -u.key : u.key;
  return u;
}

}  // namespace gpuclean::clean

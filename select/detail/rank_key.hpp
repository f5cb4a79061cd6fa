#pragma once
// Ranking keys: every element maps to a 32-bit unsigned key such that a SMALLER key is BETTER
// (selected first), -0 equals +0, and NaN maps to kInvalidKey, above every valid key. Top-k,
// bottom-k, top-|x| and ascending order statistics are then all "the k smallest keys, ties by
// lowest index". Valid keys lie in [0x007FFFFF, 0xFF800000].

#include <cstdint>
#include <cstring>

#include "select/select_types.hpp"

#include "select/cuda/host_device.hpp"

namespace gpuclean::select::detail {

inline constexpr std::uint32_t kInvalidKey = 0xFFFFFFFFu;

enum class KeyMode : int {
  kLargest = 0,     ///< top-k of x
  kSmallest = 1,    ///< bottom-k of x; also ascending order statistics
  kLargestAbs = 2,  ///< top-k of |x|
};

inline KeyMode key_mode(Order o) {
  switch (o) {
    case Order::kLargest: return KeyMode::kLargest;
    case Order::kSmallest: return KeyMode::kSmallest;
    case Order::kLargestAbs: return KeyMode::kLargestAbs;
  }
  return KeyMode::kLargest;
}

GPUCLEAN_HD std::uint32_t float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
#endif
}

GPUCLEAN_HD float bits_float(std::uint32_t b) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(b);
#else
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
#endif
}

/// Order-preserving map of a non-NaN float onto uint32 (ascending).
GPUCLEAN_HD std::uint32_t ascending_bits(float y) {
  if (y == 0.0f) y = 0.0f;  // -0 -> +0
  const std::uint32_t b = float_bits(y);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

/// The inverse of ascending_bits.
GPUCLEAN_HD float from_ascending_bits(std::uint32_t k) {
  return bits_float((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k);
}

/// rank_key on the float's bits, for a mode known at compile time: a handful of integer
/// operations, identical results.
template <KeyMode kMode>
GPUCLEAN_HD std::uint32_t rank_key_bits(std::uint32_t b) {
  const std::uint32_t mag = b & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return kInvalidKey;                 // NaN
  if constexpr (kMode == KeyMode::kLargestAbs) return ~(mag | 0x80000000u);
  if (mag == 0) b = 0;                                        // -0 -> +0
  const std::uint32_t asc = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  if constexpr (kMode == KeyMode::kLargest) return ~asc;
  return asc;
}

GPUCLEAN_HD std::uint32_t rank_key(float x, KeyMode mode) {
  if (x != x) return kInvalidKey;
  switch (mode) {
    case KeyMode::kLargest: return ~ascending_bits(x);
    case KeyMode::kSmallest: return ascending_bits(x);
    case KeyMode::kLargestAbs: return ~ascending_bits(x < 0.0f ? -x : x);
  }
  return kInvalidKey;
}

/// (key, index) packed so that sorting ascending gives key order, then lowest index: the tie rule.
GPUCLEAN_HD std::uint64_t composite(std::uint32_t key, std::uint32_t index) {
  return (static_cast<std::uint64_t>(key) << 32) | index;
}
GPUCLEAN_HD std::uint32_t composite_key(std::uint64_t c) { return static_cast<std::uint32_t>(c >> 32); }
GPUCLEAN_HD std::uint32_t composite_index(std::uint64_t c) { return static_cast<std::uint32_t>(c); }

}  // namespace gpuclean::select::detail

#pragma once
// Splitters in Eytzinger (BFS) order for SampleSelect's count pass: a complete binary tree of
// 2^levels - 1 keys at indices 1.., each node's children at 2i and 2i + 1. A search is `levels`
// steps of i = 2i + (tree[i] <= key), with no branch and a fixed trip count, so a thread can walk
// several keys at once and keep several shared-memory loads in flight. Host-compilable: the tree
// is built on the host and the descent is unit-tested on the CPU.

#include <cstdint>
#include <vector>

#include "select/detail/rank_key.hpp"

namespace gpuclean::select::detail {

/// A tree of sorted bounds, laid out for segment_of: `nodes` has 2^levels entries (index 0
/// unused). When the last bound is kInvalidKey (NaN's own segment, as SampleSelect's bounds
/// always end) it is left out of the tree and added back by segment_of, so 4095 splitters make a
/// 12-level tree.
struct EytzingerTree {
  std::vector<std::uint32_t> nodes;
  int levels = 0;
  int real_bounds = 0;          ///< bounds in the tree
  bool invalid_bound = false;   ///< a last bound kInvalidKey was left out
};

/// Builds the tree of `bounds` (strictly increasing). Padding nodes are kInvalidKey: no valid key
/// reaches them, and NaN keys are clamped back by segment_of.
inline EytzingerTree make_eytzinger_tree(const std::vector<std::uint32_t>& bounds) {
  EytzingerTree t;
  t.invalid_bound = !bounds.empty() && bounds.back() == kInvalidKey;
  t.real_bounds = static_cast<int>(bounds.size()) - (t.invalid_bound ? 1 : 0);
  while ((1 << t.levels) - 1 < t.real_bounds) ++t.levels;
  const int size = (1 << t.levels) - 1;
  t.nodes.assign(static_cast<std::size_t>(size) + 1, kInvalidKey);
  // In-order walk of the implicit tree visits the nodes in sorted order.
  int next = 0;
  std::vector<int> stack;
  int i = 1;
  while (i <= size || !stack.empty()) {
    while (i <= size) {
      stack.push_back(i);
      i *= 2;
    }
    i = stack.back();
    stack.pop_back();
    t.nodes[static_cast<std::size_t>(i)] = next < t.real_bounds ? bounds[static_cast<std::size_t>(next)] : kInvalidKey;
    ++next;
    i = 2 * i + 1;
  }
  return t;
}

/// The last step of a descent: after `levels` steps from i = 1, i - 2^levels keys of the tree
/// are <= key. Returns the segment (the number of bounds <= key).
GPUCLEAN_HD int eytzinger_segment(unsigned i, std::uint32_t key, int levels, int real_bounds, bool invalid_bound) {
  const int below = static_cast<int>(i - (1u << levels));
  return (below < real_bounds ? below : real_bounds) + ((invalid_bound && key == kInvalidKey) ? 1 : 0);
}

/// One whole search (the count kernel interleaves four of these).
GPUCLEAN_HD int segment_of(const std::uint32_t* nodes, int levels, int real_bounds, bool invalid_bound,
                           std::uint32_t key) {
  unsigned i = 1;
  for (int l = 0; l < levels; ++l) i = 2 * i + (nodes[i] <= key ? 1u : 0u);
  return eytzinger_segment(i, key, levels, real_bounds, invalid_bound);
}

}  // namespace gpuclean::select::detail

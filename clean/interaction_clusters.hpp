#pragma once
// Clark's minor cycle as independent parts, run side by side on the GPU's SMs, with a merge that
// gives exactly the components, in exactly the order, of the sequential minor cycle.
//
// 1. Clusters. A component at member c changes member m only when |m.x - c.x| <= hw and
//    |m.y - c.y| <= hw (the beam patch). Members are binned in square cells of side
//    >= hw + 1; members of one cell, and of 8-adjacent cells whose bounding boxes come within hw
//    of each other in both axes, are joined (union-find). Any pair that can interact ends in
//    one cluster (the rule may join more than needed, which costs parallelism, never
//    exactness). A cluster's Högbom therefore runs the same whatever the others do.
// 2. Each cluster runs its own Högbom (MinorCycleCpu on its members) until its best member is
//    at or below the limit, or it made `budget` components, and records for each component its
//    packed peak P (key, then lowest pixel: packed_peak.hpp).
// 3. Merge. The sequential cycle always takes the largest P among the clusters' next components.
//    Let E be the running minimum of P along a cluster's sequence. A component whose P is below
//    every earlier P of its cluster (a new minimum) is taken only when it is the largest of all
//    clusters' next components; the components after it with P >= E follow it at once (each is
//    above every other cluster's next P, since those were below E when E was taken). So the
//    sequence is made of blocks sharing one E, taken in decreasing E; E values of different
//    clusters never tie (different pixels). The global order is therefore a stable sort of all
//    components by E, descending (stable keeps each cluster's own order), truncated at `budget`:
//    a cluster cut at `budget` cannot contribute more than `budget` to the first `budget`.
//    The limit needs no merge: the sequential cycle stops when every cluster's next P is at or
//    below the limit, which is where each cluster stopped.

#include <cstdint>
#include <span>
#include <vector>

#include "clean/minor_cycle_cpu.hpp"

namespace gpuclean::clean {

/// The cell grid of the cluster rule: square cells of side `cell` >= hw + 1, gx x gy of them,
/// at most about kMaxInteractionCells (larger cells for large images with a small patch).
inline constexpr std::size_t kMaxInteractionCells = std::size_t{1} << 20;
struct InteractionGrid {
  std::size_t cell = 1, gx = 1, gy = 1;
  std::size_t cells() const { return gx * gy; }
};
InteractionGrid interaction_grid(std::size_t half_width, std::size_t width, std::size_t height);

/// One label per member (the same label for members of one cluster; labels are cell indices of
/// the cluster's root). Members may be in any order.
std::vector<std::uint32_t> interaction_clusters(std::span<const ActiveMember> members, std::size_t half_width,
                                                std::size_t width, std::size_t height);

/// A cluster's component as the merge needs it.
struct SequencedComponent {
  Component component;
  std::uint64_t peak = 0;  ///< packed peak when it was chosen
};

/// The merge of step 3: the global sequence, at most `budget` long.
std::vector<Component> merge_cluster_sequences(const std::vector<std::vector<SequencedComponent>>& sequences,
                                               std::size_t budget);

/// Steps 1 to 3 on the CPU: the statement of what the GPU minor cycle computes. `active` in pixel
/// order. Returns the components made (appended to `components`).
std::size_t clustered_minor_cycle_cpu(const PreparedPsf& psf, std::size_t half_width, std::size_t width,
                                      std::size_t height, const std::vector<ActiveMember>& active, double limit,
                                      double gain, bool allow_negative, std::size_t budget,
                                      std::vector<Component>* components);

}  // namespace gpuclean::clean

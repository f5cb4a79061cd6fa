#pragma once
// The minor cycle's team kernel (team_kernel.cu): one persistent block per SM; each block
// cleans the large clusters one at a time with all its threads, then each of its warps cleans
// small clusters. Every team runs Clark's minor cycle (Högbom on its members with the beam
// patch) and records its components with their merge key (interaction_clusters.hpp).

#include <cuda_runtime.h>

#include "clean/gpu/minor_types.hpp"

namespace gpuclean::clean::gpu {

/// The largest cluster the row team keeps in shared memory (larger ones are cleaned in global
/// memory, much more slowly).
__host__ __device__ std::uint32_t team_shared_members();
/// The dynamic shared memory each block is launched with.
std::uint32_t team_shared_bytes();

/// Launches the team kernel with one block per SM of the current device.
void launch_teams(cudaStream_t s, const TeamArgs& a);

/// Blocks launched (the SM count): the "SMs busy" figure is clusters-in-flight over this.
int team_blocks();

}  // namespace gpuclean::clean::gpu

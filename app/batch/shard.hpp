#pragma once
// Splitting a batch between processes with the schedulers users already have: --shard I/N, a
// Slurm job array, an MPI launcher, or a Slurm array of MPI jobs. Observation j (in manifest
// order) belongs to shard j mod N, so every observation is taken by exactly one shard.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuclean::app {

struct Shard {
  std::size_t index = 0;  ///< 0 <= index < count
  std::size_t count = 1;
  std::string source;     ///< "--shard", "Slurm array", "MPI (Open MPI)", "Slurm array x MPI (PMI)", ... or "none"
};

/// Reads an environment variable; nullptr when unset. Tests pass a map instead of getenv.
using Environment = std::function<const char*(const char*)>;
Environment process_environment();

/// Parses "I/N" (0 <= I < N). Throws clean::InvalidSettings otherwise.
Shard parse_shard(const std::string& text);

/// --shard when given (it wins over the environment); otherwise Slurm's SLURM_ARRAY_TASK_ID /
/// _COUNT (minus _MIN, divided by _STEP) and the MPI rank (OMPI_COMM_WORLD_RANK/_SIZE, else
/// PMI_RANK/PMI_SIZE), combined as index = array_index * ranks + rank when both are set.
/// Throws clean::InvalidSettings for values that cannot be a shard (with the fix).
Shard resolve_shard(const std::string& cli_shard, const Environment& env);

inline bool in_shard(std::size_t observation, const Shard& s) { return observation % s.count == s.index; }

/// This process's place among the processes of one node (Open MPI / MPICH local rank), so that
/// several ranks on a node share its GPUs instead of all using them all.
struct LocalRank {
  int rank = 0, size = 1;
};
LocalRank local_rank(const Environment& env);

/// The visible GPUs this process uses: every one for a single process per node, else the ones
/// whose index is congruent to the local rank (and one shared GPU when ranks outnumber GPUs).
/// max_gpus (0: no limit) caps the count.
std::vector<int> devices_for(int visible, const LocalRank& local, std::size_t max_gpus);

}  // namespace gpuclean::app

#include "app/batch/shard.hpp"

#include <cstdlib>

#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

// A non-negative integer, or nullopt when unset; throws when set to something else.
std::optional<long long> read_count(const Environment& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (*end != '\0' || x < 0)
    throw clean::InvalidSettings(std::string(name) + "='" + v + "' is not a non-negative integer; fix the job "
                                 "script or give --shard I/N.");
  return x;
}

struct Split {
  long long index = 0, count = 1;
};

std::optional<Split> slurm_array(const Environment& env) {
  const auto id = read_count(env, "SLURM_ARRAY_TASK_ID");
  const auto count = read_count(env, "SLURM_ARRAY_TASK_COUNT");
  if (!id) return std::nullopt;
  if (!count || *count < 1)
    throw clean::InvalidSettings("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; give --shard I/N.");
  const long long min = read_count(env, "SLURM_ARRAY_TASK_MIN").value_or(0);
  const long long step = std::max(1LL, read_count(env, "SLURM_ARRAY_TASK_STEP").value_or(1));
  const long long offset = *id - min;
  if (offset < 0 || offset % step != 0 || offset / step >= *count)
    throw clean::InvalidSettings("the Slurm array task " + std::to_string(*id) + " is not one of " +
                                 std::to_string(*count) + " evenly spaced tasks from " + std::to_string(min) +
                                 "; use a range such as --array=0-" + std::to_string(*count - 1) + " or give --shard I/N.");
  return Split{offset / step, *count};
}

std::optional<Split> mpi_rank(const Environment& env, std::string* flavour) {
  for (const auto& [rank_var, size_var, name] :
       {std::tuple{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"}, std::tuple{"PMI_RANK", "PMI_SIZE", "PMI"}}) {
    const auto rank = read_count(env, rank_var);
    if (!rank) continue;
    const auto size = read_count(env, size_var);
    if (!size || *size < 1 || *rank >= *size)
      throw clean::InvalidSettings(std::string(rank_var) + " is set but " + size_var +
                                   " is missing or not above it; give --shard I/N.");
    *flavour = name;
    return Split{*rank, *size};
  }
  return std::nullopt;
}

}  // namespace

Environment process_environment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [&](const std::string& s, long long* out) {
    if (s.empty()) return false;
    char* end = nullptr;
    *out = std::strtoll(s.c_str(), &end, 10);
    return *end == '\0';
  };
  long long i = -1, n = 0;
  if (slash == std::string::npos || !number(text.substr(0, slash), &i) || !number(text.substr(slash + 1), &n) || n < 1 ||
      i < 0 || i >= n)
    throw clean::InvalidSettings("--shard " + text + ": give I/N with 0 <= I < N, e.g. --shard 0/4 ... --shard 3/4.");
  return Shard{static_cast<std::size_t>(i), static_cast<std::size_t>(n), "--shard"};
}

Shard resolve_shard(const std::string& cli_shard, const Environment& env) {
  if (!cli_shard.empty()) return parse_shard(cli_shard);
  std::string flavour;
  const auto array = slurm_array(env);
  const auto mpi = mpi_rank(env, &flavour);
  if (array && mpi) {
    return Shard{static_cast<std::size_t>(array->index * mpi->count + mpi->index),
                 static_cast<std::size_t>(array->count * mpi->count), "Slurm array x MPI (" + flavour + ")"};
  }
  if (array) return Shard{static_cast<std::size_t>(array->index), static_cast<std::size_t>(array->count), "Slurm array"};
  if (mpi)
    return Shard{static_cast<std::size_t>(mpi->index), static_cast<std::size_t>(mpi->count), "MPI (" + flavour + ")"};
  return Shard{0, 1, "none"};
}

LocalRank local_rank(const Environment& env) {
  for (const auto& [rank_var, size_var] : {std::pair{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                                           std::pair{"MPI_LOCALRANKID", "MPI_LOCALNRANKS"}}) {
    const char* r = env(rank_var);
    const char* s = env(size_var);
    if (r && s) {
      const int rank = std::atoi(r), size = std::atoi(s);
      if (size >= 1 && rank >= 0 && rank < size) return LocalRank{rank, size};
    }
  }
  return {};
}

std::vector<int> devices_for(int visible, const LocalRank& local, std::size_t max_gpus) {
  std::vector<int> out;
  if (visible <= 0) return out;
  if (local.size <= 1) {
    for (int d = 0; d < visible; ++d) out.push_back(d);
  } else if (local.size >= visible) {
    out.push_back(local.rank % visible);
  } else {
    for (int d = local.rank; d < visible; d += local.size) out.push_back(d);
  }
  if (max_gpus > 0 && out.size() > max_gpus) out.resize(max_gpus);
  return out;
}

}  // namespace gpuclean::app

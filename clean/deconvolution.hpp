#pragma once
// The run facade, on radler's model (Radler(settings, work table) with Perform): every front end
// (the 2-D command and its Python call, cubes and WSClean channel sets, batch, the benchmarks)
// fills a work table (work_table.hpp), plans the run once (run_plan.hpp) and hands both to a
// Deconvolution, which cleans each group of planes to its end, plan.workers groups at once, each
// worker with its own deconvolver (on the GPU its own stream, plans and workspaces, on the GPU the
// plan gives it). Another program's major cycle (WSClean's) performs one round at a time instead:
// outer_loop.hpp's OuterLoopSession, made from the same table and plan.

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "clean/deconvolver.hpp"
#include "clean/run_plan.hpp"
#include "clean/work_table.hpp"

namespace gpuclean::clean {

/// Deconvolvers kept from one run to the next (batch, benchmarks): worker w uses (*pool)[w],
/// made when missing, so that a later run finds its plans, pools and streams warm.
using DeconvolverPool = std::vector<std::unique_ptr<Deconvolver>>;

/// Runs `count` jobs on `workers` threads (the caller's among them), each thread with its own
/// deconvolver of `algorithm` on `device`; `run(j, deconvolver)` does job j. The first failure
/// stops the rest and is rethrown. With `gpus` (on the GPU) worker w runs on gpus[w % size], its
/// deconvolver made there; without, every worker on the caller's current device, which is the
/// caller's again on return.
void for_each_worker(std::size_t count, std::size_t workers, Algorithm algorithm, Device device,
                     const std::function<void(std::size_t, Deconvolver&)>& run, DeconvolverPool* pool = nullptr,
                     const std::vector<int>& gpus = {});

/// Makes `pool`'s first `workers` deconvolvers (those missing) and prepares them
/// (Deconvolver::prepare, for width x height images when given), worker w on gpus[w % size] as
/// for_each_worker places it, each on a thread of its own. Only a head start: a worker that fails is
/// left unmade, for its first run to make and report. Nothing off the GPU.
void prepare_workers(DeconvolverPool& pool, std::size_t workers, Algorithm algorithm, Device device,
                     const std::vector<int>& gpus, std::size_t width = 0, std::size_t height = 0);

class Deconvolution {
 public:
  /// `settings`, `table` and `extras` outlive the run. The table's groups
  /// are made (group_planes()); the plan comes from plan_run().
  Deconvolution(const CleanSettings& settings, const WorkTable& table, RunPlan plan,
                const ProblemExtras* extras = nullptr);

  /// Called from the worker that cleaned group g, as soon as it is done.
  using GroupDone = std::function<void(std::size_t group, const CleanResult&)>;

  /// Every group to its end; the results in group order. `on_cycle` reports every major cycle
  /// (one group's run only: with several workers it is called from several threads).
  std::vector<CleanResult> run(const CycleCallback& on_cycle = {}, const GroupDone& on_group = {},
                               DeconvolverPool* pool = nullptr);

  const RunPlan& plan() const { return plan_; }
  /// The GPU that cleaned each group (-1: the CPU), after run().
  const std::vector<int>& group_gpus() const { return group_gpus_; }

 private:
  const CleanSettings& settings_;
  const WorkTable& table_;
  RunPlan plan_;
  const ProblemExtras* extras_;
  std::vector<int> group_gpus_;
};

}  // namespace gpuclean::clean

#pragma once
// One WSClean major cycle's round of the hook's session: its floor and budget from WSClean's meta
// and the session's own --niter, and whether WSClean should run another major cycle. The Python
// hook only converts the arrays and prints the line.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "clean/outer_loop.hpp"

namespace gpuclean::app {

/// The numbers of one call's meta, as WSClean passes them.
struct WscleanMeta {
  std::int64_t iteration_number = 0;  ///< components WSClean has counted so far
  std::int64_t max_iterations = 0;    ///< its -niter
  double mgain = 1.0;
  double major_iter_threshold = 0.0;  ///< this major cycle's stop (its peak x (1 - mgain))
  double final_threshold = 0.0;       ///< its -threshold, or -auto-threshold x its noise
};

/// What the session carries from call to call.
struct WscleanRoundRules {
  std::optional<std::size_t> niter;  ///< gpuclean's own --niter (GPUCLEAN_OPTIONS), a further limit
  /// WSClean's own -auto-mask: at gpuclean's --auto-mask switch the round says "no more", and
  /// WSClean changes phase (and threshold) as after its own last major cycle of the first phase.
  bool wsclean_auto_mask = false;
};

struct WscleanRound {
  clean::OuterLoopRound round;
  std::size_t budget = 0;  ///< the components the round was allowed
  bool more = false;       ///< another major cycle is due ("continue")
};

/// A whole-image call: down to max(the major-iteration threshold, the final threshold) and
/// mgain's own stop, with at most the components WSClean has left.
WscleanRound next_round(clean::OuterLoopSession& session, const WscleanMeta& meta, const WscleanRoundRules& rules,
                        const clean::CycleCallback& on_cycle = {});

/// -parallel-deconvolution's whole-image round for its sub-images: their major-iteration threshold
/// is the sub-images' peak x (1 - mgain), which the round's own mgain stop applies (and reports
/// as another major cycle due), so the floor is the final threshold; `budget` is what the
/// sub-images' counts leave (gpuclean.wsclean_parallel).
WscleanRound next_sub_image_round(clean::OuterLoopSession& session, const WscleanMeta& meta, std::size_t budget,
                                  const WscleanRoundRules& rules, const clean::CycleCallback& on_cycle = {});

}  // namespace gpuclean::app

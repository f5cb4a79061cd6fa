#include "app/outer/wsclean_round.hpp"

#include <algorithm>

#include "app/outer/major_cycle_rule.hpp"

namespace gpuclean::app {
namespace {

WscleanRound round_to(clean::OuterLoopSession& session, double floor, double mgain, std::size_t budget,
                      const WscleanRoundRules& rules, const clean::CycleCallback& on_cycle) {
  if (rules.niter) {
    const std::size_t done = session.result().stop.iterations;
    budget = std::min(budget, *rules.niter > done ? *rules.niter - done : std::size_t{0});
  }
  WscleanRound out;
  out.budget = budget;
  out.round = session.clean(floor, mgain, budget, on_cycle);
  const clean::OuterLoopRound& r = out.round;
  out.more = round_wants_more(r, budget);
  // gpuclean's mask takes over: WSClean's own -auto-mask changes phase (and its threshold) when
  // told that this major cycle is its last of the first phase.
  if (r.auto_mask_started && rules.wsclean_auto_mask) out.more = false;
  return out;
}

std::size_t left(std::int64_t max_iterations, std::int64_t done) {
  return max_iterations > done ? static_cast<std::size_t>(max_iterations - done) : 0;
}

}  // namespace

WscleanRound next_round(clean::OuterLoopSession& session, const WscleanMeta& meta, const WscleanRoundRules& rules,
                        const clean::CycleCallback& on_cycle) {
  const double floor = std::max(meta.major_iter_threshold, meta.final_threshold);
  return round_to(session, floor, meta.mgain, left(meta.max_iterations, meta.iteration_number), rules, on_cycle);
}

WscleanRound next_sub_image_round(clean::OuterLoopSession& session, const WscleanMeta& meta, std::size_t budget,
                                  const WscleanRoundRules& rules, const clean::CycleCallback& on_cycle) {
  return round_to(session, meta.final_threshold, meta.mgain, budget, rules, on_cycle);
}

}  // namespace gpuclean::app

#pragma once
// Whether a round of OuterLoopSession leaves another major cycle due: the one rule that the
// WSClean hook (wsclean_round.cpp) and `gpuclean image` (app/image/major_cycles.cpp) share, so
// that the two front ends cannot drift apart.

#include <cstddef>

#include "clean/outer_loop.hpp"

namespace gpuclean::app {

/// Another major cycle is due when the round stopped at its own mgain floor, with components made
/// and budget (the components it was allowed) left; not when it stopped at a threshold, the
/// budget or anything else.
inline bool round_wants_more(const clean::OuterLoopRound& r, std::size_t budget) {
  return r.reason == clean::StopReason::kThreshold && r.round_floor && r.components > 0 && r.components < budget;
}

}  // namespace gpuclean::app

#pragma once
// Earth-rotation synthesis: the (u, v) tracks that an array's baselines sweep while the source
// crosses the sky.

#include <vector>

#include "data/arrays.hpp"

namespace gpuclean::data {

struct UvSample {
  double u, v;  ///< wavelengths
};

struct TrackSettings {
  double dec_deg = -30.0;
  double freq_hz = 1.4e9;
  double ha_start_hours = -4.0;
  double ha_end_hours = 4.0;
  double step_seconds = 60.0;
  double min_elevation_deg = 15.0;  ///< samples with the source lower than this are dropped
};

/// One sample per baseline and time step (the conjugate (-u, -v) is implied).
std::vector<UvSample> uv_tracks(const ArrayLayout& array, const TrackSettings& settings);

}  // namespace gpuclean::data

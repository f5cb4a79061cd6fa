#include "beam/pb_correction.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace gpuclean::beam {

bool pb_keeps_pixel(double power_beam, PbPolarizations pols, double limit, WscleanVersion version) {
  const double b = power_beam;
  if (version == WscleanVersion::k37) {
    switch (pols) {
      case PbPolarizations::kStokesI:
      case PbPolarizations::kSingleCircular:
        return b > limit;  // NaN where b <= limit
      case PbPolarizations::kXXYY:
        return 2.0 * b * b > limit * limit;  // Frobenius norm² of diag(b, b)
      case PbPolarizations::kFullStokes:
        break;
    }
  }
  return 4.0 * b * b > limit * limit;  // HMC4x4::Norm() of b·I₄
}

void correct_plane(std::span<float> plane, std::span<const double> power_beam, PbPolarizations pols, double limit,
                   WscleanVersion version) {
  if (plane.size() != power_beam.size()) {
    throw std::invalid_argument("correct_plane: the image has " + std::to_string(plane.size()) +
                                " pixels, the beam " + std::to_string(power_beam.size()));
  }
  for (std::size_t i = 0; i != plane.size(); ++i) {
    const double b = power_beam[i];
    if (pb_keeps_pixel(b, pols, limit, version)) {
      plane[i] = static_cast<float>(static_cast<double>(plane[i]) * (1.0 / b));
    } else {
      plane[i] = std::numeric_limits<float>::quiet_NaN();
    }
  }
}

void correct_planes(std::span<const std::span<float>> planes, std::span<const double> power_beam,
                    PbPolarizations pols, double limit, WscleanVersion version) {
  const std::size_t expected = pols == PbPolarizations::kXXYY ? 2 : pols == PbPolarizations::kFullStokes ? 4 : 1;
  if (planes.size() != expected) {
    throw std::invalid_argument("correct_planes: " + std::to_string(planes.size()) + " planes given, the set has " +
                                std::to_string(expected));
  }
  for (std::size_t p = 0; p != planes.size(); ++p) {
    if (planes[p].size() != power_beam.size()) {
      throw std::invalid_argument("correct_planes: plane " + std::to_string(p) + " has " +
                                  std::to_string(planes[p].size()) + " pixels, the beam " +
                                  std::to_string(power_beam.size()));
    }
  }
  for (std::span<float> plane : planes) correct_plane(plane, power_beam, pols, limit, version);
}

std::vector<MuellerTerm> mueller_terms(PbPolarizations pols, WscleanVersion version) {
  std::vector<int> indices;
  if (version == WscleanVersion::k37 && (pols == PbPolarizations::kStokesI || pols == PbPolarizations::kSingleCircular)) {
    indices = {0, 9, 15};
  } else if (version == WscleanVersion::k37 && pols == PbPolarizations::kXXYY) {
    indices = {0, 9, 10, 15};
  } else {
    for (int k = 0; k != 16; ++k) indices.push_back(k);
  }
  std::vector<MuellerTerm> terms;
  for (int k : indices) terms.push_back({k, k == 0 || k == 3 || k == 8 || k == 15});
  return terms;
}

std::vector<float> mueller_image(const MuellerTerm& term, std::span<const double> power_beam) {
  std::vector<float> out(power_beam.size(), 0.0f);
  if (term.is_power_beam) {
    for (std::size_t i = 0; i != out.size(); ++i) out[i] = static_cast<float>(power_beam[i]);
  }
  return out;
}

}  // namespace gpuclean::beam

#include "app/image/primary_beam.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "beam/beam_image.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

using io::ms::PolRequest;

bool has(const std::vector<PolRequest>& pols, PolRequest p) { return std::find(pols.begin(), pols.end(), p) != pols.end(); }

}  // namespace

std::optional<beam::PbPolarizations> pb_polarizations(const std::vector<PolRequest>& pols) {
  // W31:structures/primarybeam.cpp: Stokes I, a single RR or LL, XX and YY, or a set with IQUV.
  if (pols == std::vector<PolRequest>{PolRequest::kI}) return beam::PbPolarizations::kStokesI;
  if (pols == std::vector<PolRequest>{PolRequest::kRR} || pols == std::vector<PolRequest>{PolRequest::kLL})
    return beam::PbPolarizations::kSingleCircular;
  if (pols == std::vector<PolRequest>{PolRequest::kXX, PolRequest::kYY}) return beam::PbPolarizations::kXXYY;
  if (has(pols, PolRequest::kI) && has(pols, PolRequest::kQ) && has(pols, PolRequest::kU) && has(pols, PolRequest::kV))
    return beam::PbPolarizations::kFullStokes;
  return std::nullopt;
}

std::optional<PrimaryBeamPlan> plan_primary_beam(const ImageOptions& o, const io::ms::MsMetadata& first) {
  if (!o.primary_beam.apply) return std::nullopt;
  const beam::DishSelection dish = beam::select_dish(first.telescope);
  if (!dish.telescope) throw clean::InvalidSettings("-apply-primary-beam: " + dish.refusal);
  const std::optional<beam::PbPolarizations> pols = pb_polarizations(o.pols);
  if (!pols)
    throw clean::InvalidSettings("-apply-primary-beam corrects Stokes I, RR or LL alone, XX and YY, or a list with all of "
                                 "I, Q, U and V (as WSClean); give one of those with -pol");
  return PrimaryBeamPlan{beam::DishModel(*dish.telescope), *pols, o.primary_beam.limit};
}

std::vector<double> channel_power_beam(const PrimaryBeamPlan& plan, const ImageOptions& o,
                                       const io::ms::MsSelection& sel, double frequency_hz) {
  beam::ImageGrid grid;
  grid.width = o.run.image.width;
  grid.height = o.run.image.height;
  grid.scale_l = grid.scale_m = o.run.image.scale;
  grid.phase_centre = {sel.ra_rad, sel.dec_rad};
  // Pointed at the phase centre: FIELD's DELAY_DIR, which EveryBeam uses, is the phase centre
  // in every MS gpuclean images (a moving or shifted centre is refused).
  beam::BeamImageOptions options;
  options.threads = o.run.threads > 0 ? static_cast<unsigned>(o.run.threads) : 0u;
  return beam::power_beam_image(plan.model, grid, grid.phase_centre, frequency_hz, options);
}

std::vector<double> corrected(const std::vector<double>& image, const std::vector<double>& power_beam,
                              const PrimaryBeamPlan& plan) {
  std::vector<double> out(image.size());
  for (std::size_t i = 0; i < image.size(); ++i)
    out[i] = beam::pb_keeps_pixel(power_beam[i], plan.pols, plan.limit) ? image[i] / power_beam[i]
                                                                          : std::numeric_limits<double>::quiet_NaN();
  return out;
}

std::vector<int> mueller_indices(beam::PbPolarizations pols) {
  std::vector<int> k;
  for (const beam::MuellerTerm& t : beam::mueller_terms(pols, beam::WscleanVersion::k37)) k.push_back(t.index);
  return k;
}

std::vector<std::pair<int, std::vector<double>>> mueller_images(const PrimaryBeamPlan& plan,
                                                                const std::vector<double>& power_beam) {
  std::vector<std::pair<int, std::vector<double>>> out;
  for (const beam::MuellerTerm& t : beam::mueller_terms(plan.pols, beam::WscleanVersion::k37))
    out.emplace_back(t.index, t.is_power_beam ? power_beam : std::vector<double>(power_beam.size(), 0.0));
  return out;
}

}  // namespace gpuclean::app

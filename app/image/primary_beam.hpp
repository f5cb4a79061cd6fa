#pragma once
// -apply-primary-beam in `gpuclean image` (issue 47): the dish model of the MS's telescope
// (beam/, docs/primary-beam.md) and WSClean's rules for which polarizations can be corrected,
// checked before any read; then each output channel's power beam vp² at its central frequency,
// pointed at the phase centre, for NAME[-000c]-beam-k.fits and the -pb images (image / vp², NaN at
// or below -primary-beam-limit).

#include <optional>
#include <vector>

#include "app/image/image_options.hpp"
#include "beam/dish_model.hpp"
#include "beam/pb_correction.hpp"
#include "io/ms/ms_metadata.hpp"
#include "io/ms/ms_selection.hpp"

namespace gpuclean::app {

struct PrimaryBeamPlan {
  beam::DishModel model;
  beam::PbPolarizations pols;
  double limit = 0.005;
};

/// The plan when -apply-primary-beam is given, else none. Throws clean::InvalidSettings (exit 2)
/// for a telescope gpuclean has no dish model of (aperture arrays: EveryBeam's), or a -pol list
/// WSClean cannot correct (I, RR or LL alone, XX,YY, or a list holding IQUV).
std::optional<PrimaryBeamPlan> plan_primary_beam(const ImageOptions& options, const io::ms::MsMetadata& first);

/// The power beam of one output channel on the run's image grid, at `frequency_hz`.
std::vector<double> channel_power_beam(const PrimaryBeamPlan& plan, const ImageOptions& options,
                                       const io::ms::MsSelection& selection, double frequency_hz);

/// `image` corrected: image / vp² where the plan keeps the pixel, NaN elsewhere.
std::vector<double> corrected(const std::vector<double>& image, const std::vector<double>& power_beam,
                              const PrimaryBeamPlan& plan);

/// The Mueller-matrix images WSClean 3.7 writes for the plan's polarizations (NAME-beam-k.fits):
/// (k, image) with vp² on the diagonal terms and 0 elsewhere.
std::vector<std::pair<int, std::vector<double>>> mueller_images(const PrimaryBeamPlan& plan,
                                                                const std::vector<double>& power_beam);

/// The indices k of those images (for the list of outputs).
std::vector<int> mueller_indices(beam::PbPolarizations pols);

/// The polarization set of a -pol list as WSClean can correct it, or none.
std::optional<beam::PbPolarizations> pb_polarizations(const std::vector<io::ms::PolRequest>& pols);

}  // namespace gpuclean::app

#include "clean/outer_loop.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "clean/errors.hpp"
#include "clean/scale_set.hpp"

namespace gpuclean::clean {
namespace {

bool any_finite(const float* pixels, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (std::isfinite(pixels[i])) return true;
  return false;
}

void check_input(const OuterLoopInput& in, std::size_t planes) {
  if (in.width == 0 || in.height == 0 || in.channels == 0 || in.polarizations == 0)
    throw InvalidInput("the residual has no pixels; give images of at least one channel and polarization.");
  if (in.channels > 1 && in.polarizations > 1)
    throw InvalidSettings("gpuclean joins channels or polarizations, not both at once; image one polarization per run "
                          "(e.g. -pol i) or one channel (leave out -channels-out).");
  if (planes != in.channels * in.polarizations)
    throw InvalidInput("the residual has " + std::to_string(planes) + " planes where " +
                       std::to_string(in.channels) + " channels x " + std::to_string(in.polarizations) +
                       " polarizations were announced.");
  if (in.psfs.size() != in.channels || in.frequencies_hz.size() != in.channels || in.weights.size() != in.channels)
    throw InvalidInput("give one PSF, frequency and weight per channel.");
  for (const HostImage& psf : in.psfs)
    if (psf.width != in.width || psf.height != in.height)
      throw InvalidInput("the PSF must have the residual's size (" + std::to_string(in.width) + " x " +
                         std::to_string(in.height) + ").");
}

// Multiscale's largest PSF sidelobe outside its patch (patch_within_sidelobe). A round subtracts
// each scale's PSF within its patch only, and the re-imaging corrects the rest; where the PSF's
// sidelobes beyond the patch are large (a sparse or snapshot array) the round works on a residual
// that is that wrong and cleans sidelobes. Measured on DP3's 8-station LOFAR MS (tests/realdata,
// 256² at 4″), where the sidelobes 50 pixels out are 0.96: 52.2 Jy of model against WSClean 3.1's
// 29.6 Jy with the 50-pixel patch, 29.637 Jy (equal) with the whole PSF.
constexpr float kMultiscaleExteriorSidelobe = 0.1f;

// The beam patch that reaches every pixel of every PSF from its peak.
std::size_t whole_psf_patch(const std::vector<PreparedPsf>& psfs) {
  std::size_t hw = 1;
  for (const PreparedPsf& p : psfs)
    hw = std::max({hw, p.peak_x, p.image.width - 1 - p.peak_x, p.peak_y, p.image.height - 1 - p.peak_y});
  return hw;
}

}  // namespace

OuterLoopSession::OuterLoopSession(const CleanSettings& settings, OuterLoopInput input,
                                   const std::vector<const float*>& first)
    : settings_(settings), input_(std::move(input)) {
  check_input(input_, first.size());
  const std::size_t n = input_.width * input_.height, npol = input_.polarizations;
  std::vector<std::size_t> channels;  // not flagged
  for (std::size_t c = 0; c < input_.channels; ++c) {
    bool finite = false;
    for (std::size_t p = 0; p < npol; ++p) finite = finite || any_finite(first[c * npol + p], n);
    if (input_.weights[c] > 0.0 && finite) channels.push_back(c);
  }
  if (channels.empty())
    throw InvalidInput("every channel of the residual is flagged (weight 0 or no finite pixel); there is nothing to clean.");
  for (std::size_t c : channels) {
    std::string warning;
    psfs_.push_back(prepare_psf(input_.psfs[c], input_.width, input_.height, &warning));
    for (std::size_t p = 0; p < npol; ++p) {
      active_.push_back(c * npol + p);
      first_.emplace_back(input_.width, input_.height);
      std::copy(first[c * npol + p], first[c * npol + p] + n, first_.back().pixels.begin());
    }
  }

  // A round is one WSClean 3.1 major iteration, whose sub-minor loop subtracts the whole PSF between
  // the pixels it cleans (deconvolution/subminorloop.cpp, SubMinorLoop::Run); so Clark's minor cycle
  // here subtracts the whole PSF too (no exterior sidelobe, so no sidelobe term in its limit).
  // Measured on a 32-antenna, 1 h MS (test_image_clean_vs_wsclean): with the 50-pixel patch, whose
  // exterior sidelobe was 8.4 %, the third round made 1057 components in its first cycle where
  // WSClean's pass made 697 (the whole PSF: 698). Multiscale keeps patches, as
  // small as the PSF allows (patch_within_sidelobe): a whole twice-convolved PSF per scale and plane would
  // multiply the memory the GPU holds, and on test_image_multiscale_vs_wsclean (exterior sidelobe
  // below 10 %) it did not bring the residual closer (+5.3 % against +4.4 %).
  if (!settings_.multiscale.enabled) settings_.beam_patch = std::max(settings_.beam_patch, whole_psf_patch(psfs_));
  else settings_.beam_patch = patch_within_sidelobe(psfs_, settings_.beam_patch, kMultiscaleExteriorSidelobe);

  // The active planes as the run facade's table, joined as they came; the plan once.
  table_.width = input_.width;
  table_.height = input_.height;
  table_.channels = channels.size();
  table_.polarizations = npol;
  table_.fits_mask = input_.fits_mask ? &*input_.fits_mask : nullptr;
  table_.polarization_factor = input_.polarization_factor;
  for (std::size_t i = 0; i < active_.size(); ++i) {
    const std::size_t c = active_[i] / npol;
    table_.planes.push_back({&first_[i], &psfs_[i / npol], i / npol, i % npol, "", input_.frequencies_hz[c],
                             input_.weights[c], nullptr});
  }
  group_planes(table_, settings_, JoinRule::kTable);
  PlanRequest request;
  request.gpus = input_.gpus;
  plan_ = plan_run(table_, settings_, resolve_device(settings_.device, &device_note_), request);
  settings_.device = plan_.device;
  group_.emplace(table_, 0, settings_);
  group_->set_device_planes(plan_.device_planes);
  group_->set_split_gpus(plan_.split_gpus);
  deconvolver_ = make_deconvolver(settings_.algorithm, settings_.device);
  steps_ = deconvolver_->steps(group_->problem(), settings_);
  driver_.emplace(*steps_, group_->problem(), settings_, on_cycle_);
}

OuterLoopSession::~OuterLoopSession() {
  // The driver and the steps go before what they refer to, the deconvolver's resources last.
  driver_.reset();
  steps_.reset();
}

float OuterLoopSession::peak() { return steps_->residual_peak(); }

void OuterLoopSession::set_residuals(const std::vector<const float*>& planes) {
  if (planes.size() != this->planes())
    throw InvalidInput("the residual has " + std::to_string(planes.size()) + " planes; this run has " +
                       std::to_string(this->planes()) + ".");
  std::vector<const float*> active;
  for (std::size_t i : active_) active.push_back(planes[i]);
  steps_->set_residuals(active);
}

OuterLoopRound OuterLoopSession::clean(double floor, double round_gain, std::size_t budget,
                                       const CycleCallback& on_cycle) {
  on_cycle_ = on_cycle;
  OuterLoopRound round;
  round.peak = steps_->residual_peak();
  const std::size_t iterations = result_.stop.iterations, cycles = result_.stop.major_cycles;
  settings_.niter = iterations + budget;  // the driver's stopping rule reads it
  driver_->resume(floor, round_gain);
  while (driver_->next(result_)) {
  }
  round.components = result_.stop.iterations - iterations;
  round.major_cycles = result_.stop.major_cycles - cycles;
  round.peak_left = steps_->residual_peak();
  round.key = driver_->first_key();
  round.key_left = driver_->last_key();
  round.threshold = result_.stop.threshold;
  round.noise_sigma = result_.stop.noise_sigma;
  round.reason = result_.stop.reason;
  round.round_floor = driver_->round_floor_ruled();
  round.auto_mask_started = driver_->auto_mask_started();
  return round;
}

void OuterLoopSession::finish() {
  driver_->finish(result_);
  result_.images = {};
}

std::vector<HostImage> OuterLoopSession::models() { return to_input_order(steps_->model_images(), true); }
std::vector<HostImage> OuterLoopSession::residuals() { return to_input_order(steps_->residual_images(), false); }

// Planes left out keep an empty model and their first residual's place with NaN (never cleaned).
std::vector<HostImage> OuterLoopSession::to_input_order(std::vector<HostImage> active, bool models) {
  std::vector<HostImage> out(planes(), HostImage(input_.width, input_.height));
  if (!models)
    for (HostImage& image : out) std::fill(image.pixels.begin(), image.pixels.end(), std::nanf(""));
  for (std::size_t i = 0; i < active_.size(); ++i) out[active_[i]] = std::move(active[i]);
  return out;
}

}  // namespace gpuclean::clean

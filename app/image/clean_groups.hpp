#pragma once
// Which output channels `gpuclean image -niter` cleans together, and in which beam (WSClean 3.1,
// W31:main/wsclean.cpp RunClean, runIndependentGroup, minTheoreticalBeamSize):
// - with -join-channels every output channel is one group; without it each output channel is a
//   group of its own, deconvolved on its own: its own major cycles, σ, thresholds and counts;
// - a group's automatic multiscale scales and its -local-rms-window are measured in WSClean's
//   theoretical beam, the smallest over the group's channels of max(1 / longest baseline, the
//   pixel, the taper), not in the PSF's fitted beam.
#include <cstddef>
#include <vector>

#include "app/image/image_args.hpp"
#include "clean/clean_settings.hpp"
#include "imaging/image_run.hpp"

namespace gpuclean::app {

/// The groups of `channels` output channels, each a list of channel indices, in order.
std::vector<std::vector<std::size_t>> clean_groups(std::size_t channels, bool joined);

/// WSClean's theoretical beam of `group` in pixels of -scale; channels with no baseline are left
/// out (WSClean's beam is then not finite); 0 when no channel has one.
double group_beam_pixels(const std::vector<imaging::ChannelImage>& channels, const std::vector<std::size_t>& group,
                         const imaging::ImageGeometry& image, double taper_fwhm_rad);

/// A group's session settings: the run's, with the multiscale scales and the local-RMS window in
/// `beam_pixels` (kept as given when 0) and the CPU forced by -device cpu.
clean::CleanSettings group_settings(const ImageOptions& options, double beam_pixels);

}  // namespace gpuclean::app

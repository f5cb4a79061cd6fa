#pragma once
// WSClean's per-channel files (-channels-out N): NAME-0000-dirty.fits, NAME-0001-dirty.fits, ...
// with NAME-0000-psf.fits twins, NAME-0000-I-dirty.fits, -Q-, ... with polarisations (their PSF
// has no polarisation part), and NAME-MFS-* for the whole band. Finding and naming them.

#include <cstddef>
#include <string>
#include <vector>

namespace gpuclean::io {

struct WscleanChannelSet {
  std::string prefix;                           ///< NAME as given to WSClean's -name (with its folder)
  std::size_t channels = 0;
  std::vector<std::string> polarizations;       ///< "I", "Q", ...; empty when the names carry none
  std::vector<std::vector<std::string>> dirty;  ///< dirty[pol][channel] (one row when no polarisations)
  std::vector<std::string> psf;                 ///< psf[channel]
  std::string mfs_dirty_first_pol;              ///< NAME-MFS[-POL]-dirty.fits of the first polarisation, or ""
  std::string mfs_psf;                          ///< NAME-MFS-psf.fits, or ""
};

/// The set written under `prefix`. `prefix` is WSClean's -name, or one of the set's dirty files
/// (NAME-0000-dirty.fits, NAME-MFS-dirty.fits). Throws FitsError(kInput) naming the missing file
/// when there is no channel 0000, a channel is missing (in any polarisation) or a PSF is missing.
WscleanChannelSet find_wsclean_channels(const std::string& prefix);

/// Every set in `folder` (each NAME with a NAME-0000[-POL]-dirty.fits), sorted by NAME. A set
/// whose files are incomplete is returned with only its prefix: cleaning it reports what is missing.
std::vector<WscleanChannelSet> find_wsclean_sets(const std::string& folder);

/// True when `path` names a file of a channel set (NAME-0003-dirty.fits, NAME-MFS-psf.fits, ...)
/// and that set's NAME-0000[-POL]-dirty.fits exists beside it.
bool is_wsclean_set_member(const std::string& path);

/// NAME-0000[-POL]-KIND.fits, or NAME-MFS[-POL]-KIND.fits for channel -1.
std::string wsclean_name(const std::string& prefix, int channel, const std::string& pol, const std::string& kind);

}  // namespace gpuclean::io

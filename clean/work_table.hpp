#pragma once
// What a run deconvolves, as radler's work table: every plane (its residual, PSF, channel,
// polarization, frequency, weight, restoring beam) and the groups of planes cleaned together.
// The join is decided here, once, from the settings and the table's layout; every front end
// (the 2-D command, cubes, batch, the benchmarks, the WSClean session) fills a table and hands
// it to the run facade (deconvolution.hpp). A 2-D image is a table of one plane.
//
// A group's CLEAN problem (CleanProblem: the dirty image, or a joined group's integrated image
// and PSF, the mask, the restoring beam) is assembled in one place, GroupProblem.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "clean/beam.hpp"
#include "clean/clean_settings.hpp"
#include "clean/deconvolver.hpp"
#include "clean/host_image.hpp"
#include "clean/plane_set.hpp"
#include "clean/psf.hpp"

namespace gpuclean::clean {

/// One plane of the table. The pointers outlive the run.
struct WorkPlane {
  const HostImage* dirty = nullptr;  ///< the residual the run starts from
  const PreparedPsf* psf = nullptr;  ///< prepared (unit peak)
  std::size_t channel = 0, polarization = 0;
  std::string pol;                   ///< its correlation or Stokes name ("I", "XX", ...); may be empty
  double frequency_hz = 0.0;
  double weight = 1.0;               ///< its share of a joined channel group (any scale)
  /// Restores this plane (null: no restoration).
  const PixelGaussian* beam = nullptr;
};

struct WorkTable {
  std::size_t width = 0, height = 0;
  std::size_t channels = 1, polarizations = 1;
  std::vector<WorkPlane> planes;
  /// Non-zero pixels may be cleaned (--fits-mask); null: everywhere.
  const HostImage* fits_mask = nullptr;
  /// A one-plane table's mask made by the caller (a dirty image in device memory has no host
  /// pixels to make it from); null: made from the plane and fits_mask.
  const std::vector<std::uint8_t>* mask = nullptr;
  /// The join's polarization factor; 0: from the planes' names (polarization_factor()).
  double polarization_factor = 0.0;
  /// The groups of planes cleaned together (indices into planes), in the order they run:
  /// group_planes() fills them.
  std::vector<std::vector<std::size_t>> groups;
  /// The join the groups were made with (none: every plane is its own group).
  std::optional<Join> join;

  /// The plane of `channel` and `polarization` (throws InvalidInput when the table has none).
  std::size_t index(std::size_t channel, std::size_t polarization) const;
};

/// A table of one plane, one group (a 2-D image): `mask` and `beam` may be null (made from the
/// dirty image; no restoration).
WorkTable one_plane_table(const HostImage& dirty, const PreparedPsf& psf, const std::vector<std::uint8_t>* mask,
                          const PixelGaussian* beam);

/// How group_planes() joins.
enum class JoinRule {
  /// As the settings ask (--join-channels, --join-polarizations); asking to join fewer than two
  /// channels or polarizations is refused.
  kSettings,
  /// Every plane of the table in one group (another program's loop, which hands over what it
  /// joins): several channels joined as --join-channels, several polarizations as
  /// --join-polarizations.
  kTable,
};

/// Decides the join once and fills table.groups and table.join. Throws InvalidSettings when the
/// settings cannot join this table (too few planes; channels and polarizations at once) and
/// InvalidInput when it has no plane.
void group_planes(WorkTable& table, const CleanSettings& settings, JoinRule rule = JoinRule::kSettings);

/// What a front end adds to each group's problem (the 2-D command: its observer of the quick-look
/// scaling and --compare-select, the --local-rms map as an output, a dirty image handed over in
/// device memory).
struct ProblemExtras {
  RunObserver* observer = nullptr;
  bool keep_noise_map = false;
  const DeviceImage* dirty_on_device = nullptr;
};

/// One group's CLEAN problem, kept alive while it runs: the one place a CleanProblem is made.
class GroupProblem {
 public:
  /// `extras`' pointers outlive this.
  GroupProblem(const WorkTable& table, std::size_t group, const CleanSettings& settings,
               const ProblemExtras* extras = nullptr);
  GroupProblem(const GroupProblem&) = delete;
  GroupProblem& operator=(const GroupProblem&) = delete;

  const CleanProblem& problem() const { return *problem_; }
  bool joined() const { return planes_.size() > 1; }
  /// The group's planes (indices into the table).
  const std::vector<std::size_t>& planes() const { return planes_; }
  /// GPU: a joined group's planes held on the device at once (0: all).
  void set_device_planes(std::size_t n) { joined_.device_planes = n; }
  /// GPU: a joined group's planes split over these GPUs (JoinedPlanes::split_gpus).
  void set_split_gpus(const std::vector<int>& gpus) { joined_.split_gpus = gpus; }

 private:
  std::vector<std::size_t> planes_;
  JoinedPlanes joined_;
  std::optional<JoinedProblemImages> integrated_;
  std::vector<std::uint8_t> mask_;
  std::optional<PixelGaussian> beam_;
  std::optional<CleanProblem> problem_;
};

}  // namespace gpuclean::clean

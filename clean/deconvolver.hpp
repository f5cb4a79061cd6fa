#pragma once
// The interface every CLEAN implementation (CPU reference, GPU) provides, so that tests and the
// CLI drive them with one call and compare them component for component.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clean/beam.hpp"
#include "clean/clean_settings.hpp"
#include "clean/host_image.hpp"
#include "clean/local_rms.hpp"
#include "clean/plane_set.hpp"
#include "clean/psf.hpp"
#include "clean/run_observer.hpp"

namespace gpuclean::clean {

/// Why a run stopped; every one of them is logged and written into the outputs.
enum class StopReason {
  kThreshold,           ///< the peak residual reached the threshold (absolute or automatic)
  kMaxIterations,       ///< niter components were cleaned
  kDiverged,            ///< the peak residual stopped falling between major cycles
  kNoCleanablePixels,   ///< nothing left to clean: empty mask, all NaN, or no positive pixel
};
std::string_view to_string(StopReason r);

struct Component {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  float flux = 0.0f;        ///< Jy (model image units): the integral of its scale's kernel x flux
  std::uint32_t scale = 0;  ///< index into CleanResult::components.scales (0 without --multiscale)
};

/// One scale of a run (one, a delta function, without --multiscale).
struct ScaleSummary {
  double size = 0.0;         ///< pixels
  double bias = 1.0;         ///< the scale-bias factor
  std::size_t components = 0;
  double flux = 0.0;         ///< sum of its components' fluxes
};

/// State after a major cycle, for the per-cycle log line.
struct CycleReport {
  std::size_t cycle = 0;        ///< 1-based
  std::size_t iterations = 0;   ///< components so far
  float peak = 0.0f;            ///< peak residual (|x|, or x with --no-negative) after the cycle
  double model_flux = 0.0;
  double threshold = 0.0;       ///< the stopping threshold in force
  std::size_t candidates = 0;   ///< Clark: the active set of the cycle
  double seconds = 0.0;         ///< since the start of the run
};
using CycleCallback = std::function<void(const CycleReport&)>;

/// A dirty image in device memory (the Python package's CUDA arrays): row-major float32,
/// width x height, ready on `stream` (a cudaStream_t as an integer; 0: the legacy default).
struct DeviceImage {
  const float* data = nullptr;
  std::size_t width = 0, height = 0;
  std::uintptr_t stream = 0;
};

/// What CLEAN works on. The PSF is prepared (unit peak); the mask marks cleanable pixels.
struct CleanProblem {
  const HostImage& dirty;
  const PreparedPsf& psf;
  const std::vector<std::uint8_t>& mask;
  /// When set, the run also restores (model (x) beam + residual) where the images live.
  const PixelGaussian* restoring_beam = nullptr;
  /// What the front end watches (the quick-look scaling, --compare-select); null: nothing.
  RunObserver* observer = nullptr;
  /// --noise-map: hand the --local-rms map back in CleanResult::images.noise_map.
  bool keep_noise_map = false;
  /// When set, the GPU paths take the dirty image from device memory, copied on the device, and
  /// `dirty` holds only its size (the CPU paths need it on the host).
  const DeviceImage* dirty_on_device = nullptr;
  /// --join-channels / --join-polarizations: the planes cleaned together. `dirty` and `psf` are
  /// then their integrated image and PSF (joined_problem_images() makes them), and
  /// `restoring_beam`, when set, restores every plane.
  const JoinedPlanes* joined = nullptr;
};

/// A joined run's integrated dirty image and PSF, for CleanProblem::dirty and ::psf.
struct JoinedProblemImages {
  HostImage dirty;
  PreparedPsf psf;
};
JoinedProblemImages joined_problem_images(const JoinedPlanes& planes);

/// Throws InvalidSettings when the problem joins planes with settings that cannot (Högbom;
/// --multiscale with polarizations), and InvalidInput when its planes do not share one grid.
void check_joinable(const CleanProblem& problem, const CleanSettings& settings);

struct StageSeconds {
  double setup = 0.0;     ///< GPU: from the call to the first major cycle (uploads, PSF transform, workspaces)
  double download = 0.0;  ///< GPU: residual, model and components to the host
  double scales = 0.0;    ///< multiscale: the scale images and the choice among them
  double noise_map = 0.0; ///< --local-rms: the noise maps and their weights, over the major cycles
  double select = 0.0;    ///< candidate selection (Clark)
  double minor = 0.0;     ///< minor cycles / Högbom iterations
  double convolve = 0.0;  ///< major-cycle PSF convolutions
  double restore = 0.0;   ///< restoration (when asked for)

  /// Sums runs' stages (the benchmarks' totals).
  StageSeconds& operator+=(const StageSeconds& o) {
    setup += o.setup, download += o.download, scales += o.scales, noise_map += o.noise_map;
    select += o.select, minor += o.minor, convolve += o.convolve, restore += o.restore;
    return *this;
  }
};

/// How GPU Clark's minor cycles used the GPU (zero on other paths).
struct MinorCycleStats {
  std::size_t cycles = 0;          ///< minor cycles run on the GPU
  std::size_t clusters = 0;        ///< independent clusters, summed over the cycles
  std::size_t longest_chain = 0;   ///< most components one cluster made in one cycle
  std::size_t widest_cluster = 0;  ///< most members in one cluster
  /// SMs the team kernel gave work to (min(SMs, max(block clusters, warp clusters)) / SMs: small
  /// clusters go to the blocks round-robin), averaged over the cycles weighted by their
  /// minor-cycle time: from the launch configuration.
  double sm_busy_fraction = 0.0;
  std::size_t reruns = 0;          ///< cycles run again with a larger record pool
  std::size_t sequential = 0;      ///< cycles run as one cluster (the record pool could not grow)
};

/// One plane of a joined run at its end.
struct PlaneImages {
  HostImage model, residual, restored;
};

/// A run's end, in four parts: the images it made, what its model is made of, where and why it
/// stopped, and how it ran.
struct CleanResult {
  struct Images {
    HostImage model;     ///< Jy/pixel
    HostImage residual;  ///< Jy/beam; NaN where the dirty image was NaN
    HostImage restored;  ///< Jy/beam, when the problem gave a restoring beam
    HostImage noise_map; ///< --local-rms with CleanProblem::keep_noise_map (Jy/beam)
    /// Joined runs: model and residual above are the integrated ones; here are each plane's.
    std::vector<PlaneImages> planes;
  } images;

  struct Components {
    /// In the order they were found. Joined runs: Component::flux is the integrated flux (the
    /// weighted mean over channels, Stokes I's over polarizations).
    std::vector<Component> list;
    std::vector<float> plane_fluxes;   ///< joined runs: each component's flux in every plane (component-major)
    /// --fit-spectral-pol: each component's polynomial terms (component-major), Jy at the
    /// reference frequency, which is given here.
    std::vector<double> spectral_terms;
    double reference_frequency_hz = 0.0;
    std::vector<ScaleSummary> scales;  ///< the scales cleaned with, smallest first
  } components;

  /// The driver's ledger.
  struct Stop {
    std::size_t iterations = 0;
    std::size_t major_cycles = 0;
    StopReason reason = StopReason::kThreshold;
    float peak_residual = 0.0f;  ///< over cleanable pixels, at the end
    double threshold = 0.0;      ///< the final stopping threshold
    double noise_sigma = 0.0;    ///< last robust noise estimate (0 when not computed)
  } stop;

  struct Diagnostics {
    StageSeconds seconds;
    std::size_t peak_gpu_bytes = 0;  ///< GPU runs: the most device memory in use at once
    MinorCycleStats minor_stats;
    /// --auto-mask: the major cycle that opened with the mask (0: the first phase never ended),
    /// and the pixels the mask let each scale clean.
    std::size_t auto_mask_cycle = 0;
    std::vector<std::size_t> auto_mask_pixels;
    LocalRmsSummary local_rms;       ///< --local-rms: its map's window and range
    /// GPU: where seconds.setup went, in order (seconds; "fft_plans_made" is a count), so that
    /// one run on a multi-GPU host tells which part of the setup serialises.
    std::vector<std::pair<std::string, double>> setup_parts;
  } diagnostics;
};

class MajorCycleSteps;

/// One algorithm on one device. GPU deconvolvers keep their GPU resources (stream, cuFFT plans,
/// caches) from one run to the next.
class Deconvolver {
 public:
  virtual ~Deconvolver() = default;
  virtual std::string_view name() const = 0;
  /// The algorithm's steps for `problem` (major_cycle_steps.hpp), for a driver run from outside
  /// (MajorCycleDriver, e.g. one major cycle per round of an outer loop). `problem`, `settings`
  /// and this deconvolver outlive them.
  virtual std::unique_ptr<MajorCycleSteps> steps(const CleanProblem& problem, const CleanSettings& settings) = 0;
  /// Makes what the deconvolver keeps from run to run (GPU: its streams and pinned staging, and
  /// with a width x height, the cuFFT plans of such images' usual PSF and restoring beam) on the
  /// current device now, ahead of its first run (a cube does it while it reads). Optional: the
  /// first run makes what is missing.
  virtual void prepare(std::size_t /*width*/ = 0, std::size_t /*height*/ = 0) {}
  /// The steps run to the end by the major-cycle driver.
  CleanResult run(const CleanProblem& problem, const CleanSettings& settings, const CycleCallback& on_cycle);
};

/// A deconvolver for a resolved device (kCpu or kGpu, never kAuto). Throws InvalidSettings when
/// the combination is not available in this build.
std::unique_ptr<Deconvolver> make_deconvolver(Algorithm algorithm, Device device);

}  // namespace gpuclean::clean

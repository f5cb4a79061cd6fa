#include "app/image/image_outputs.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <exception>
#include <mutex>
#include <thread>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "app/version.hpp"
#include "app/image/primary_beam.hpp"
#include "app/image/psf_beam.hpp"
#include "io/fits_error.hpp"
#include "io/fits_writer.hpp"
#include "io/staged_outputs.hpp"

namespace gpuclean::app {
namespace {

constexpr double kRadToDeg = 180 / M_PI;

/// NAME-KIND.fits, NAME-000c-KIND.fits or NAME-MFS-KIND.fits (channel −1), as W31:io/imagefilename.h;
/// with several polarizations NAME[-000c|-MFS]-POL-KIND.fits, the PSF without one.
std::string output_name(const ImageOptions& o, int channel, const std::string& kind) {
  const bool shared = kind.rfind("psf", 0) == 0 || kind.rfind("beam-", 0) == 0;  // one per channel, not per pol
  const std::string pol = o.pols.size() > 1 && !shared ? "-" + io::ms::pol_name(o.selection.pol) : "";
  if (o.run.channels_out == 1) return o.name + pol + "-" + kind + ".fits";
  if (channel < 0) return o.name + "-MFS" + pol + "-" + kind + ".fits";
  char tag[32];
  std::snprintf(tag, sizeof tag, "-%04d", channel);
  return o.name + tag + pol + "-" + kind + ".fits";
}

std::vector<std::string> pol_kinds(const ImageOptions& o, bool mfs);

/// The files of a channel (mfs: of the MFS). With -niter 0 WSClean also writes -image.fits, equal
/// to the dirty image (plan §5, measured); with -niter > 0 the PSF is always made (the loop needs
/// it) and written. -no-dirty leaves the dirty image out, -make-psf-only all but the PSF;
/// -save-first-residual (with -mgain < 1) adds each channel's first-residual.
std::vector<std::string> kinds(const ImageOptions& o, bool mfs) {
  std::vector<std::string> k = pol_kinds(o, mfs);
  if (o.primary_beam.apply && !o.make_psf_only) {  // W31: beam-k per channel, -pb images also for the MFS
    const std::optional<beam::PbPolarizations> pols = pb_polarizations(o.pols);
    if (!mfs && pols)
      for (int m : mueller_indices(*pols)) k.push_back("beam-" + std::to_string(m));
    k.push_back("image-pb");
    if (o.niter > 0) k.insert(k.end(), {"residual-pb", "model-pb"});
  }
  if (o.selection.pol != o.pols.front()) {  // the PSF and the beam are the first polarization's
    std::erase(k, "psf");
    std::erase_if(k, [](const std::string& kind) { return kind.rfind("beam-", 0) == 0; });
  }
  return k;
}

std::vector<std::string> pol_kinds(const ImageOptions& o, bool mfs) {
  if (o.make_psf_only) return {"psf"};
  std::vector<std::string> k;
  if (o.niter > 0) {
    k = {"dirty", "residual", "model", "image", "psf"};
    if (o.deconvolution.save_first_residual && o.deconvolution.mgain != 1.0 && !mfs) k.push_back("first-residual");
  } else {
    k = {"dirty", "image"};
    if (o.run.make_psf) k.push_back("psf");
  }
  if (o.no_dirty) k.erase(k.begin());
  return k;
}

/// MJD seconds → 'YYYY-MM-DDThh:mm:ss.s' (WSClean's DATE-OBS has one decimal).
std::string date_obs(double mjd_seconds) {
  const double days = std::floor(mjd_seconds / 86400);
  // Tenths truncated, as WSClean's DATE-OBS shows them.
  double seconds = std::floor((mjd_seconds - days * 86400) * 10) / 10;
  // Civil date from MJD (Fliegel–Van Flandern through the Julian day number).
  long long l = static_cast<long long>(days) + 2400001 + 68569;
  const long long n = 4 * l / 146097;
  l -= (146097 * n + 3) / 4;
  const long long i = 4000 * (l + 1) / 1461001;
  l = l - 1461 * i / 4 + 31;
  const long long j = 80 * l / 2447;
  const long long day = l - 2447 * j / 80;
  l = j / 11;
  const long long month = j + 2 - 12 * l, year = 100 * (n - 49) + i + l;
  const int h = static_cast<int>(seconds / 3600);
  seconds -= h * 3600;
  const int m = static_cast<int>(seconds / 60);
  seconds -= m * 60;
  char text[64];
  std::snprintf(text, sizeof text, "%04lld-%02lld-%02lldT%02d:%02d:%04.1f", year, month, day, h, m, seconds);
  return text;
}


/// The header of one output; `clean`: the deconvolution's counts go on it (residual, model, image).
io::FitsHeader header(const ImageOptions& o, const imaging::ChannelImage& c, bool mfs, const ImageContext& ctx,
                      const CleanImages* clean) {
  const DeconvolutionOptions& d = o.deconvolution;
  io::FitsHeader h;
  const io::ms::MsSelection& sel = *ctx.selection;
  const double delta_deg = o.run.image.scale * kRadToDeg;
  h.set_double("EQUINOX", 2000, "J2000");
  h.set_string("BTYPE", "Intensity");
  h.set_string("TELESCOP", ctx.metadata->telescope);
  h.set_string("OBSERVER", ctx.metadata->observer);
  h.set_string("OBJECT", sel.field_name);
  h.set_string("CTYPE1", "RA---SIN", "Right ascension angle cosine");
  h.set_double("CRPIX1", static_cast<double>(o.run.image.width / 2 + 1));
  h.set_double("CRVAL1", sel.ra_rad * kRadToDeg);
  h.set_double("CDELT1", -delta_deg);
  h.set_string("CUNIT1", "deg");
  h.set_string("CTYPE2", "DEC--SIN", "Declination angle cosine");
  h.set_double("CRPIX2", static_cast<double>(o.run.image.height / 2 + 1));
  h.set_double("CRVAL2", sel.dec_rad * kRadToDeg);
  h.set_double("CDELT2", delta_deg);
  h.set_string("CUNIT2", "deg");
  h.set_string("CTYPE3", "FREQ", "Central frequency");
  h.set_double("CRPIX3", 1);
  h.set_double("CRVAL3", (c.band_start_hz + c.band_end_hz) / 2);
  h.set_double("CDELT3", c.band_end_hz - c.band_start_hz);
  h.set_string("CUNIT3", "Hz");
  h.set_string("CTYPE4", "STOKES");
  h.set_double("CRPIX4", 1);
  h.set_double("CRVAL4", io::ms::pol_stokes_code(o.selection.pol));
  h.set_double("CDELT4", 1);
  h.set_string("CUNIT4", "");
  h.set_string("SPECSYS", "TOPOCENT");
  h.set_string("DATE-OBS", date_obs(ctx.metadata->first_time_s));
  h.set_string("WSCDATAC", sel.data_column);
  h.set_string("WSCWEIGH", weight_mode_text(o.run.weighting));
  h.set_double("WSCENVIS", c.counters.effective_visibilities());
  h.set_double("WSCFIELD", sel.field);
  h.set_double("WSCGAIN", d.settings.gain);
  h.set_double("WSCGKRNL", static_cast<double>(c.kernel_support));  // our kernel support (WSClean: 7)
  h.set_double("WSCIMGWG", c.imgwg);
  if (clean) h.set_double("WSCMAJOR", static_cast<double>(clean->major_iterations));
  h.set_double("WSCMGAIN", d.mgain);
  if (clean) h.set_double("WSCMINOR", static_cast<double>(clean->minor_iterations));
  h.set_double("WSCNEGCM", d.settings.allow_negative ? 1 : 0);
  h.set_double("WSCNEGST", 0);  // -stop-negative is refused
  h.set_double("WSCNITER", static_cast<double>(d.niter));
  h.set_double("WSCNORMF", c.counters.gridded_weights);  // the MFS: channel 0's (measured)
  h.set_double("WSCNVIS", static_cast<double>(c.counters.visibilities));
  h.set_double("WSCNWLAY", static_cast<double>(c.w_planes));  // our w-planes (WSClean's wgridder: 1)
  h.set_double("WSCTHRES", d.settings.threshold);  // the -threshold given (measured: 0 with -auto-threshold)
  h.set_double("WSCVWSUM", c.counters.visibility_weights);
  if (o.selection.channel_begin && !mfs) {
    h.set_double("WSCCHANS", static_cast<double>(*o.selection.channel_begin));
    h.set_double("WSCCHANE", static_cast<double>(*o.selection.channel_end));
  }
  return h;
}

/// One FITS file to write: its staged name and what goes in it.
struct FileJob {
  std::string path;
  const std::vector<double>* data;
  io::FitsHeader header;
  io::WriteOptions options;
  std::shared_ptr<const std::vector<double>> owned;  ///< data made for this file (-pb, beam-k)
};

/// The files of one output channel (or the MFS, channel −1), staged in order.
/// The -apply-primary-beam images of one output channel (or the MFS): kind → pixels.
using PbImages = std::map<std::string, std::shared_ptr<const std::vector<double>>>;

void add_jobs(std::vector<FileJob>& jobs, io::StagedOutputs& staged, const ImageOptions& o,
              const imaging::ChannelImage& c, int channel, const ImageContext& ctx, const CleanOutputs* outputs,
              const CleanImages* clean, const PbImages& pb) {
  const io::FitsHeader h = header(o, c, channel < 0, ctx, nullptr);
  const io::FitsHeader counted = outputs && clean ? header(o, c, channel < 0, ctx, clean) : h;
  io::FitsHeader bare = counted;  // WSClean 3.1 writes the MFS image with a plain FITS writer
  for (const std::string& card : counted.cards())
    if (card.rfind("WSC", 0) == 0) bare.remove(card.substr(0, card.find_first_of(" =")));
  io::WriteOptions w;
  w.beam = clean && clean->beam ? *clean->beam : channel_beam(o, c);
  w.keywords.push_back({"ORIGIN", std::string("gpuclean ") + kVersion, "gpuclean image"});
  w.history = {ctx.command_line};  // cfitsio continues it over as many HISTORY cards as it needs
  w.overwrite = true;
  w.inputs = o.ms;
  for (const std::string& kind : kinds(o, channel < 0)) {
    if (const auto it = pb.find(kind); it != pb.end()) {
      io::WriteOptions wk = w;
      if (kind == "model-pb") wk.bunit = "JY/PIXEL";
      const bool result_kind = kind != "image-pb" || o.niter > 0;
      const io::FitsHeader& hk = !result_kind ? h : (kind == "image-pb" && channel < 0 && outputs) ? bare : counted;
      jobs.push_back({staged.stage(output_name(o, channel, kind)), it->second.get(), hk, wk, it->second});
      continue;
    }
    const std::vector<double>* data = kind == "psf" ? &c.psf : &c.dirty;  // -niter 0: image = dirty
    if (clean && kind == "residual") data = &clean->residual;
    if (clean && kind == "first-residual") data = &clean->first_residual;
    if (clean && kind == "model") data = &clean->model;
    if (clean && kind == "image") data = &clean->image;
    io::WriteOptions wk = w;
    if (kind == "model") wk.bunit = "JY/PIXEL";
    const bool result_kind = kind == "residual" || kind == "model" || kind == "image" || kind == "first-residual";
    const io::FitsHeader& hk = !result_kind ? h : (kind == "image" && channel < 0 && outputs) ? bare : counted;
    jobs.push_back({staged.stage(output_name(o, channel, kind)), data, hk, wk, nullptr});
  }
}

void write_job(const FileJob& job, const ImageOptions& o) {
  const std::vector<long> axes = {static_cast<long>(o.run.image.width), static_cast<long>(o.run.image.height), 1, 1};
  std::vector<float> pixels(job.data->begin(), job.data->end());
  write_fits_image(job.path, pixels.data(), o.run.image.width, o.run.image.height, job.header, axes, job.options);
}

}  // namespace

std::string source_list_path(const ImageOptions& o) { return o.name + "-sources.txt"; }

std::vector<std::string> image_output_paths(const ImageOptions& options) {
  std::vector<std::string> paths;
  const int n = static_cast<int>(options.run.channels_out);
  for (const io::ms::PolRequest pol : options.pols) {
    ImageOptions o = options;
    o.selection.pol = pol;
    for (int c = 0; c < n; ++c)
      for (const std::string& k : kinds(o, false)) paths.push_back(output_name(o, n == 1 ? 0 : c, k));
    if (n > 1)
      for (const std::string& k : kinds(o, true)) paths.push_back(output_name(o, -1, k));
  }
  const ImageOptions& o = options;
  if (o.niter > 0 && o.deconvolution.save_source_list) paths.push_back(source_list_path(o));
  if (!o.json.empty() && o.json != "-") paths.push_back(o.json);
  return paths;
}

std::string folder_write_problem(const std::string& folder) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(folder, error);
  if (!std::filesystem::exists(status)) return "does not exist";
  if (!std::filesystem::is_directory(status)) return "is not a folder (it is a file)";
  static std::atomic<unsigned> count{0};
  for (int attempt = 0;; ++attempt) {
    const std::string test = (std::filesystem::path(folder) / (".gpuclean-write-test-" + std::to_string(::getpid()) +
                                                                 "-" + std::to_string(count++) + "-" +
                                                                 std::to_string(std::random_device{}())))
                                 .string();
    const int fd = ::open(test.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == EEXIST && attempt < 8) continue;
      return std::string("cannot take a file (creating one failed: ") + std::strerror(errno) + ")";
    }
    ::close(fd);
    if (::unlink(test.c_str()) != 0)
      return "took a test file " + test + " that could not be removed (" + std::strerror(errno) + "); remove it";
    return "";
  }
}

void check_image_outputs(const ImageOptions& o) {
  io::WriteOptions w;
  w.overwrite = true;
  w.inputs = o.ms;
  // Each distinct folder once, named with the option whose output goes there.
  std::map<std::string, std::string> folders;  // folder → "-name N" or "-json F"
  for (const std::string& path : image_output_paths(o)) {
    const std::string folder = std::filesystem::path(path).parent_path().string();
    const std::string option = !o.json.empty() && path == o.json ? "-json " + o.json : "-name " + o.name;
    folders.emplace(folder.empty() ? "." : folder, option);
  }
  for (const auto& [folder, option] : folders) {
    const std::string problem = folder_write_problem(folder);
    if (problem.empty()) continue;
    const std::string flag = option.substr(0, option.find(' '));
    const std::string fix = problem == "does not exist"           ? "create it or give another " + flag
                            : problem.rfind("is not a folder", 0) == 0 ? "give another " + flag
                                                                      : "give " + flag + " in a folder this user can write";
    throw io::FitsError(io::FitsError::Kind::kOutput,
                        "the output folder " + folder + " (of " + option + ") " + problem + "; " + fix);
  }
  for (const std::string& path : image_output_paths(o)) {
    check_output_path(path, w);
    for (const std::string& ms : o.ms)
      if (std::filesystem::weakly_canonical(path) == std::filesystem::weakly_canonical(ms))
        throw io::FitsError(io::FitsError::Kind::kExists, "output " + path + " would replace the input " + ms);
  }
}

void write_image_outputs(const ImageOptions& o, const imaging::ImageRunResult& result, const ImageContext& ctx,
                         const CleanOutputs* clean, io::StagedOutputs* shared) {
  const std::size_t expected = result.channels.size() + (result.mfs ? 1 : 0);
  if (clean && clean->images.size() != expected)
    throw std::logic_error("write_image_outputs: " + std::to_string(clean->images.size()) + " clean images for " +
                           std::to_string(expected) + " outputs");
  const auto clean_of = [&](std::size_t i) { return clean ? &clean->images[i] : nullptr; };
  std::optional<io::StagedOutputs> own;
  if (!shared) own.emplace(true);
  io::StagedOutputs& staged = shared ? *shared : *own;
  std::vector<PbImages> pb(expected);
  if (const std::optional<PrimaryBeamPlan> plan = plan_primary_beam(o, *ctx.metadata)) {
    // Each channel's power beam at its central frequency; the MFS -pb images are WSClean's mean of
    // the channels' -pb images (NaN-skipping, weighted by WSCIMGWG), and it has no beam files.
    const auto image_of = [&](std::size_t i, const std::string& kind) -> const std::vector<double>& {
      const CleanImages* ci = clean_of(i);
      const imaging::ChannelImage& ch = i < result.channels.size() ? result.channels[i] : *result.mfs;
      if (!ci) return ch.dirty;  // -niter 0: the image is the dirty image
      return kind == "residual" ? ci->residual : kind == "model" ? ci->model : ci->image;
    };
    const std::vector<std::string> corrected_kinds =
        o.niter > 0 ? std::vector<std::string>{"image", "residual", "model"} : std::vector<std::string>{"image"};
    for (std::size_t c = 0; c < result.channels.size(); ++c) {
      const imaging::ChannelImage& ch = result.channels[c];
      const std::vector<double> vp2 =
          channel_power_beam(*plan, o, *ctx.selection, (ch.band_start_hz + ch.band_end_hz) / 2);
      for (const std::string& kind : corrected_kinds)
        pb[c][kind + "-pb"] = std::make_shared<const std::vector<double>>(corrected(image_of(c, kind), vp2, *plan));
      for (auto& [k, image] : mueller_images(*plan, vp2))
        pb[c]["beam-" + std::to_string(k)] = std::make_shared<const std::vector<double>>(std::move(image));
    }
    if (result.mfs) {
      std::vector<double> weights;
      for (const imaging::ChannelImage& ch : result.channels) weights.push_back(ch.imgwg);
      for (const std::string& kind : corrected_kinds) {
        std::vector<const std::vector<double>*> planes;
        for (std::size_t c = 0; c < result.channels.size(); ++c) planes.push_back(pb[c][kind + "-pb"].get());
        pb.back()[kind + "-pb"] = std::make_shared<const std::vector<double>>(imaging::mfs_mean(planes, weights));
      }
    }
  }
  std::vector<FileJob> jobs;
  for (std::size_t c = 0; c < result.channels.size(); ++c)
    add_jobs(jobs, staged, o, result.channels[c], result.channels.size() == 1 ? 0 : static_cast<int>(c), ctx, clean,
             clean_of(c), pb[c]);
  if (result.mfs)
    add_jobs(jobs, staged, o, *result.mfs, -1, ctx, clean, clean_of(result.channels.size()), pb.back());
  // An 8192² run of 8 channels writes 27 files of 256 MiB; one writer thread managed about
  // 0.3 GB/s on the H100 host, so the files are written by several threads (cfitsio is built
  // reentrant; batch mode writes the same way). The first failure is rethrown after all stop,
  // and the staged files are then removed.
  const std::size_t threads = std::min<std::size_t>(jobs.size(), 8);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  {
    std::vector<std::jthread> writers;
    for (std::size_t t = 0; t < threads; ++t)
      writers.emplace_back([&] {
        for (std::size_t j = next++; j < jobs.size(); j = next++) {
          try {
            write_job(jobs[j], o);
          } catch (...) {
            const std::lock_guard lock(failure_mutex);
            if (!failure) failure = std::current_exception();
          }
        }
      });
  }
  if (failure) std::rethrow_exception(failure);
  if (shared) return;
  if (clean && clean->before_commit) clean->before_commit(staged);
  staged.commit();
}

}  // namespace gpuclean::app

// write_channel_simulation: a wideband simulation as WSClean names and labels its channel images.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "data/parallel_tasks.hpp"
#include "data/simulate_channels.hpp"
#include "io/fits_writer.hpp"
#include "io/staged_outputs.hpp"
#include "io/text_writer.hpp"

namespace gpuclean::data {
namespace {

std::string numbered(const std::string& prefix, std::size_t channel, const std::string& suffix) {
  char index[24];  // room for any size_t: gcc 14 warns (-Wformat-truncation) at 16
  std::snprintf(index, sizeof index, "%04zu", channel);
  return prefix + index + suffix;
}

// The spectral axis as WSClean writes it: the plane's centre frequency and width, the image
// weight that MFS weighting uses, and the plane's channels [start, end) of the (simulated) data.
io::FitsHeader with_band(io::FitsHeader header, double freq_hz, double width_hz, double image_weight,
                         std::size_t start, std::size_t end) {
  header.set_double("CRVAL3", freq_hz);
  header.set_double("CDELT3", width_hz);
  header.set_double("WSCIMGWG", image_weight, "Sum of imaging weights");
  header.set_int("WSCCHANS", static_cast<long long>(start), "Start channel index");
  header.set_int("WSCCHANE", static_cast<long long>(end), "End channel index");
  return header;
}

}  // namespace

std::vector<std::string> channel_output_names(const std::string& name, std::size_t channels) {
  std::vector<std::string> names;
  for (std::size_t c = 0; c < channels; ++c) {
    names.push_back(numbered(name + "-", c, "-dirty.fits"));
    names.push_back(numbered(name + "-", c, "-psf.fits"));
  }
  names.push_back(name + "-MFS-dirty.fits");
  names.push_back(name + "-MFS-psf.fits");
  for (std::size_t c = 0; c < channels; ++c) names.push_back(numbered("truth-", c, ".fits"));
  names.push_back("sources.csv");
  return names;
}

void check_channel_outputs(const std::string& dir, const std::string& name, std::size_t channels, bool overwrite) {
  if (name.empty() || name.find('/') != std::string::npos)
    throw std::invalid_argument("--name '" + name + "' must be a plain file-name prefix (not empty, no '/').");
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return;  // write_channel_simulation creates it
  if (!std::filesystem::is_directory(dir, ec))
    throw std::invalid_argument("--out '" + dir + "' is a file; give a folder for the simulated files.");
  io::WriteOptions opt;
  opt.overwrite = overwrite;
  for (const auto& file : channel_output_names(name, channels))
    io::check_output_path((std::filesystem::path(dir) / file).string(), opt);
}

void write_channel_simulation(const ChannelSimulation& sim, const SimulationSettings& s, const ChannelSettings& c,
                              const std::string& dir, const std::string& name, bool overwrite,
                              const std::string& command) {
  namespace fs = std::filesystem;
  if (sim.channels.empty()) throw std::invalid_argument("write_channel_simulation: no channels to write.");
  check_channel_outputs(dir, name, sim.channels.size(), overwrite);
  fs::create_directories(dir);
  const Simulation& first = sim.channels[0];
  io::FitsHeader header = simulation_header(first, s);
  header.add_history(command.substr(0, 72));
  const std::vector<long> axes = {static_cast<long>(first.size), static_cast<long>(first.size), 1, 1};
  io::WriteOptions opt;
  opt.overwrite = true;  // each writer replaces its reserved staging file
  opt.keywords.push_back({"ORIGIN", std::string("gpuclean simulate"), "simulated observation"});
  char info[80];
  std::snprintf(info, sizeof info, "%s, %zu channels, %s weighting, seed %llu", first.telescope.c_str(),
                sim.channels.size(), to_string(s.weighting).c_str(), static_cast<unsigned long long>(s.seed));
  opt.history.push_back(info);
  io::WriteOptions truth_opt = opt;
  truth_opt.bunit = "JY/PIXEL";
  const auto path = [&](const std::string& file) { return (fs::path(dir) / file).string(); };
  const auto band = [&](std::size_t i) {
    return with_band(header, sim.frequencies_hz[i], sim.widths_hz[i], sim.image_weights[i], i, i + 1);
  };
  const MfsImages mfs = mfs_images(sim, c.threads);
  const io::FitsHeader mfs_header = with_band(header, s.freq_hz, c.bandwidth_hz, mfs.weight, 0, sim.channels.size());

  // Every file appears together, or none (see io/staged_outputs.hpp); sources.csv comes last.
  // The images are staged here, in channel_output_names()' order, and written in parallel.
  struct Image {
    std::string staged;
    const std::vector<float>* pixels;
    io::FitsHeader header;
    const io::WriteOptions* options;
  };
  io::StagedOutputs staged(overwrite);
  std::vector<Image> images;
  for (std::size_t i = 0; i < sim.channels.size(); ++i) {
    images.push_back({staged.stage(path(numbered(name + "-", i, "-dirty.fits"))), &sim.channels[i].dirty, band(i), &opt});
    images.push_back({staged.stage(path(numbered(name + "-", i, "-psf.fits"))), &sim.channels[i].psf, band(i), &opt});
  }
  images.push_back({staged.stage(path(name + "-MFS-dirty.fits")), &mfs.dirty, mfs_header, &opt});
  images.push_back({staged.stage(path(name + "-MFS-psf.fits")), &mfs.psf, mfs_header, &opt});
  for (std::size_t i = 0; i < sim.channels.size(); ++i)
    images.push_back({staged.stage(path(numbered("truth-", i, ".fits"))), &sim.channels[i].truth, band(i), &truth_opt});
  const std::size_t threads = c.threads > 0 ? c.threads : static_cast<std::size_t>(std::max(1, omp_get_max_threads()));
  run_tasks(images.size(), threads, [&](std::size_t k, std::size_t) {
    const Image& im = images[k];
    io::write_fits_image(im.staged, im.pixels->data(), first.size, first.size, im.header, axes, *im.options);
  });
  Simulation reference;  // sources.csv lists the fluxes at nu0 (S0), with their spectral indices
  reference.pixel_deg = first.pixel_deg;
  reference.sources = sim.sources;
  io::write_text_file(staged.stage(path("sources.csv")), sources_csv(reference, header, sim.spectral_indices, s.freq_hz),
                      true);
  staged.commit();
}

}  // namespace gpuclean::data

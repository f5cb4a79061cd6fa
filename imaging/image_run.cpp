#include "imaging/image_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <thread>

#include "clean/errors.hpp"
#include "imaging/channel_owners.hpp"
#include "imaging/channel_samples.hpp"
#include "imaging/gridder_cpu.hpp"
#include "io/ms/ms_reader.hpp"
#ifdef GPUCLEAN_HAVE_CUDA
#include "imaging/gpu/gridder_gpu.hpp"
#include "imaging/gpu/vis_store_gpu.hpp"
#include "imaging/gpu/vis_store_multi.hpp"
#endif

namespace gpuclean::imaging {

std::vector<std::pair<std::size_t, std::size_t>> output_channel_ranges(std::size_t selected, std::size_t n) {
  if (n == 0) throw clean::InvalidSettings("-channels-out must be at least 1");
  if (n > selected)
    throw clean::InvalidSettings("-channels-out " + std::to_string(n) + " is more than the " +
                                 std::to_string(selected) + " selected channels");
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t j = 0; j < n; ++j) ranges.emplace_back(j * selected / n, (j + 1) * selected / n);
  return ranges;
}

std::vector<std::pair<std::size_t, std::size_t>> output_channel_ranges(const std::vector<double>& freq_hz,
                                                                       std::size_t n,
                                                                       const std::vector<double>& division_hz) {
  if (division_hz.empty()) return output_channel_ranges(freq_hz.size(), n);
  if (n == 0) throw clean::InvalidSettings("-channels-out must be at least 1");
  const std::size_t parts = division_hz.size() + 1;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t i = 0; i < parts; ++i) {
    const std::size_t out_begin = n * i / parts, out_end = n * (i + 1) / parts;
    if (out_end == out_begin) continue;
    const double low = i == 0 ? 0.0 : division_hz[i - 1];
    const double high = i + 1 == parts ? std::numeric_limits<double>::max() : division_hz[i];
    std::size_t first = freq_hz.size(), last = 0;
    for (std::size_t c = 0; c < freq_hz.size(); ++c)
      if (freq_hz[c] >= low && freq_hz[c] < high) first = std::min(first, c), last = c + 1;
    const std::size_t count = first < last ? last - first : 0;
    if (count < out_end - out_begin)
      throw clean::InvalidSettings("-channel-division-frequencies: the part " + std::to_string(i) + " of the band has " +
                                   std::to_string(count) + " selected channel(s) for " +
                                   std::to_string(out_end - out_begin) + " output channel(s) of -channels-out " +
                                   std::to_string(n) + "; give fewer output channels or other frequencies");
    for (const auto& [b, e] : output_channel_ranges(count, out_end - out_begin)) ranges.emplace_back(first + b, first + e);
  }
  return ranges;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// One output channel's samples; fills `out`'s range, band, counters and theoretic beam.
ChannelSamples describe_channel(const std::vector<io::ms::VisChunk>& chunks, const WeightGrid& grid,
                                const std::vector<double>& freq_hz, const std::vector<double>& width_hz,
                                std::pair<std::size_t, std::size_t> range, const ImageGeometry& image,
                                ChannelImage& out) {
  out.channel_begin = range.first, out.channel_end = range.second;
  out.band_start_hz = freq_hz[range.first] - width_hz[range.first] / 2;
  out.band_end_hz = freq_hz[range.second - 1] + width_hz[range.second - 1] / 2;
  ChannelSamples s = channel_samples(chunks, grid, freq_hz, range.first, range.second, image, out.counters);
  out.theoretic_beam_rad = s.max_baseline > 0 ? 1 / s.max_baseline : 0;
  out.imgwg = out.counters.gridded_weights;
  return s;
}

/// Every MS of the run read, and the weight grids made (one per output channel, or one with MF
/// weighting).
struct Weighted {
  std::vector<io::ms::VisChunk> chunks;
  WeightPlan plan;
  std::vector<WeightGrid> grids;
  const WeightGrid& grid(std::size_t j) const { return grids[plan.mf_weighting ? 0 : j]; }
};

Weighted read_and_weight(const std::vector<io::ms::MsSelection>& selections, const ImageRunSettings& settings,
                         ImageTimings& timings) {
  Weighted r;
  auto t0 = std::chrono::steady_clock::now();
  for (const io::ms::MsSelection& sel : selections) r.chunks.push_back(io::ms::read_visibilities(sel));
  timings.read_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  r.plan.padded_width = padded_size(settings.image.width, settings.padding);
  r.plan.padded_height = padded_size(settings.image.height, settings.padding);
  r.plan.scale_x = r.plan.scale_y = settings.image.scale;
  r.plan.settings = settings.weighting;
  r.plan.mf_weighting = settings.mf_weighting;
  r.plan.output_channels =
      output_channel_ranges(selections.front().freq_hz, settings.channels_out, settings.channel_division_hz);
  r.grids = make_weight_grids(r.plan, r.chunks, selections.front().freq_hz);
  timings.weights_s = seconds_since(t0);
  return r;
}

/// The dirty image and (with make_psf) the PSF of one output channel's samples, on the device
/// the settings name; both not yet divided by Σcw.
struct Inverted {
  std::vector<double> dirty, psf;
};

Inverted invert_images(const GridPlan& plan, const ChannelSamples& s, const ImageRunSettings& settings,
                       ImageTimings& timings) {
  const auto t0 = std::chrono::steady_clock::now();
  Inverted out;
  if (settings.device == clean::Device::kGpu) {
#ifdef GPUCLEAN_HAVE_CUDA
    GpuGridderOptions options;
    options.device = settings.gpu;
    options.budget_bytes = settings.gpu_budget_bytes;
    InvertOutput r = invert_gpu(plan, Samples{s.u, s.v, s.w, s.vis, s.cw}, true, settings.make_psf, options);
    out.dirty = std::move(r.dirty), out.psf = std::move(r.psf);
    timings.grid_kernel_s += r.timings.grid_ms / 1e3;
    timings.gpu_chunks += r.timings.chunks;
#else
    throw clean::InvalidSettings("this gpuclean was built without CUDA; image with -device cpu");
#endif
  } else {
    out.dirty = invert_cpu(plan, Samples{s.u, s.v, s.w, s.vis, s.cw}, settings.threads);
    if (settings.make_psf) out.psf = invert_cpu(plan, Samples{s.u, s.v, s.w, s.one, s.cw}, settings.threads);
  }
  timings.invert_s += seconds_since(t0);
  timings.inversions += settings.make_psf ? 2 : 1;
  timings.samples += s.cw.size();
  return out;
}

ChannelImage image_channel(const std::vector<io::ms::VisChunk>& chunks, const WeightGrid& grid,
                           const std::vector<double>& freq_hz, const std::vector<double>& width_hz,
                           std::pair<std::size_t, std::size_t> range, const ImageRunSettings& settings,
                           ImageTimings& timings) {
  ChannelImage out;
  const ChannelSamples s = describe_channel(chunks, grid, freq_hz, width_hz, range, settings.image, out);
  if (s.cw.empty())
    throw clean::InvalidInput("output channel " + std::to_string(range.first) + "–" + std::to_string(range.second) +
                              ": no visibility inside the uv grid has a nonzero weight");
  const GridPlan plan = choose_grid_plan(settings.image, settings.epsilon, w_range(s.w, s.cw), s.cw.size());
  out.w_planes = plan.planes;
  out.kernel_support = static_cast<std::size_t>(plan.kernel.support());
  const double norm = out.counters.gridded_weights;  // Σcw (W31 wgriddingmsgridder Invert)
  Inverted images = invert_images(plan, s, settings, timings);
  out.dirty = std::move(images.dirty);
  for (double& x : out.dirty) x /= norm;
  if (settings.make_psf) {
    out.psf = std::move(images.psf);
    for (double& x : out.psf) x /= norm;
    // WSClean divides the PSF by its centre pixel and the dirty image by the same factor
    // (W31:main/wsclean.cpp processFullPSF, imageMainCallback's psfFactor).
    const std::size_t W = settings.image.width, H = settings.image.height;
    out.psf_centre = out.psf[(H / 2) * W + W / 2];
    for (double& x : out.psf) x /= out.psf_centre;
    for (double& x : out.dirty) x /= out.psf_centre;
  }
  out.imgwg = out.counters.gridded_weights;
  return out;
}

}  // namespace

VisStore make_vis_store(const std::vector<io::ms::MsSelection>& selections, const ImageRunSettings& settings,
                        std::vector<ChannelImage>* headers) {
  ImageTimings timings;
  const Weighted in = read_and_weight(selections, settings, timings);
  VisStore store({settings.image, settings.epsilon, settings.threads});
  // Every channel's samples first: their counts place the channels on the GPUs.
  std::vector<ChannelImage> channel_headers(in.plan.output_channels.size());
  std::vector<ChannelSamples> samples;
  std::vector<std::size_t> counts;
  for (std::size_t j = 0; j < in.plan.output_channels.size(); ++j) {
    samples.push_back(describe_channel(in.chunks, in.grid(j), selections.front().freq_hz, selections.front().width_hz,
                                       in.plan.output_channels[j], settings.image, channel_headers[j]));
    counts.push_back(samples.back().cw.size());
  }
  if (settings.device == clean::Device::kGpu) {
#ifdef GPUCLEAN_HAVE_CUDA
    GpuGridderOptions options;
    options.device = settings.gpu;
    options.budget_bytes = settings.gpu_budget_bytes;
    if (settings.gpus.size() > 1)
      store.set_backend(make_multi_gpu_vis_store_backend(options, settings.gpus,
                                                         channel_owners(counts, settings.gpus.size())));
    else
      store.set_backend(make_gpu_vis_store_backend(options));
#else
    throw clean::InvalidSettings("this gpuclean was built without CUDA; image with -device cpu");
#endif
  }
  for (std::size_t j = 0; j < in.plan.output_channels.size(); ++j) {
    ChannelImage header = std::move(channel_headers[j]);
    ChannelSamples s = std::move(samples[j]);
    store.add_channel(std::move(s), header.counters.gridded_weights);  // Σcw, as image_channel
    header.w_planes = store.plan(j).planes;
    header.kernel_support = static_cast<std::size_t>(store.plan(j).kernel.support());
    if (headers) headers->push_back(std::move(header));
  }
  return store;
}

std::vector<double> mfs_mean(const std::vector<const std::vector<double>*>& images, const std::vector<double>& weights) {
  const std::size_t n = images.front()->size();
  std::vector<double> sum(n, 0.0), weight(n, 0.0);
  for (std::size_t c = 0; c < images.size(); ++c)
    for (std::size_t i = 0; i < n; ++i) {
      const double x = static_cast<float>((*images[c])[i]);  // as read back from the float file
      if (std::isfinite(x)) sum[i] += x * weights[c], weight[i] += weights[c];
    }
  for (std::size_t i = 0; i < n; ++i) sum[i] /= weight[i];
  return sum;
}

ImageRunResult image_run(const std::vector<io::ms::MsSelection>& selections, const ImageRunSettings& settings) {
  const std::vector<double>& freq_hz = selections.front().freq_hz;
  const std::vector<double>& width_hz = selections.front().width_hz;
  ImageRunResult result;
  const Weighted in = read_and_weight(selections, settings, result.timings);
  const std::size_t n = in.plan.output_channels.size();
  result.channels.resize(n);
  const auto one = [&](std::size_t j, const ImageRunSettings& s, ImageTimings& t) {
    result.channels[j] = image_channel(in.chunks, in.grid(j), freq_hz, width_hz, in.plan.output_channels[j], s, t);
  };
  if (settings.device != clean::Device::kGpu || settings.gpus.size() < 2 || n < 2) {
    for (std::size_t j = 0; j < n; ++j) one(j, settings, result.timings);
  } else {
    // One thread per GPU over a contiguous block of channels (by count: a channel's samples are
    // made inside its inversion); invert_s is then the wall time, the kernel seconds are summed.
    const std::vector<std::size_t> owners = channel_owners(std::vector<std::size_t>(n, 1), settings.gpus.size());
    std::vector<ImageTimings> lane(settings.gpus.size());
    std::vector<std::exception_ptr> errors(lane.size());
    std::vector<std::thread> threads;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t l = 0; l < lane.size(); ++l)
      threads.emplace_back([&, l] {
        try {
          ImageRunSettings s = settings;
          s.gpu = settings.gpus[l];
          for (std::size_t j = 0; j < n; ++j)
            if (owners[j] == l) one(j, s, lane[l]);
        } catch (...) {
          errors[l] = std::current_exception();
        }
      });
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    ImageTimings& t = result.timings;
    t.invert_s += seconds_since(t0);
    for (const ImageTimings& l : lane)
      t.inversions += l.inversions, t.samples += l.samples, t.grid_kernel_s += l.grid_kernel_s,
          t.gpu_chunks += l.gpu_chunks;
  }
  if (result.channels.size() > 1) {
    // The MFS keeps channel 0's counters; its WSCIMGWG is the channels' sum (plan §5, measured).
    ChannelImage mfs = result.channels.front();
    std::vector<const std::vector<double>*> dirty, psf;
    std::vector<double> weights;
    mfs.imgwg = 0;
    for (const ChannelImage& c : result.channels) {
      dirty.push_back(&c.dirty);
      if (settings.make_psf) psf.push_back(&c.psf);
      weights.push_back(c.imgwg);
      mfs.imgwg += c.imgwg;
      mfs.band_start_hz = std::min(mfs.band_start_hz, c.band_start_hz);
      mfs.band_end_hz = std::max(mfs.band_end_hz, c.band_end_hz);
    }
    mfs.channel_begin = 0, mfs.channel_end = freq_hz.size();
    mfs.theoretic_beam_rad = result.channels.back().theoretic_beam_rad;
    mfs.dirty = mfs_mean(dirty, weights);
    if (settings.make_psf) mfs.psf = mfs_mean(psf, weights);
    result.mfs = std::move(mfs);
  }
  return result;
}

}  // namespace gpuclean::imaging

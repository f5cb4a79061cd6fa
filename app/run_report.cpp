#include "app/run_report.hpp"

#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "app/version.hpp"

namespace gpuclean::app {

nlohmann::json make_summary_json(const RunReport& r, const clean::CleanResult& result,
                                 const clean::CleanSettings& s) {
  nlohmann::json j;
  j["gpuclean_version"] = kVersion;
  j["dirty"] = r.dirty;
  j["psf"] = r.psf;
  j["output"] = r.output;
  j["algorithm"] = r.algorithm;
  j["device"] = r.device;
  j["image"] = {{"width", r.width}, {"height", r.height}, {"nan_pixels", r.nan_pixels},
                {"dirty_on_device", r.dirty_on_device}};
  j["iterations"] = result.iterations;
  j["major_cycles"] = result.major_cycles;
  j["stop_reason"] = std::string(clean::to_string(result.reason));
  j["peak_residual"] = result.peak_residual;
  j["rms_residual"] = r.rms_residual;
  j["model_flux"] = r.model_flux;
  j["restored_peak"] = r.restored_peak;
  j["threshold"] = result.threshold;
  j["noise_sigma"] = result.noise_sigma;
  nlohmann::json beam = {{"fitted", r.beam_fitted},
                         {"bmaj_pixels", r.beam_pixels.fwhm_major_pixels()},
                         {"bmin_pixels", r.beam_pixels.fwhm_minor_pixels()}};
  if (r.beam) {
    beam["bmaj_arcsec"] = r.beam->bmaj_arcsec;
    beam["bmin_arcsec"] = r.beam->bmin_arcsec;
    beam["bpa_deg"] = r.beam->bpa_deg;
  } else {
    beam["bmaj_arcsec"] = nullptr;
    beam["bmin_arcsec"] = nullptr;
    beam["bpa_deg"] = nullptr;
  }
  j["beam"] = beam;
  j["settings"] = {{"niter", s.niter},
                   {"gain", s.gain},
                   {"mgain", s.mgain},
                   {"threshold", s.threshold},
                   {"auto_threshold", s.auto_threshold},
                   {"auto_mask", s.auto_mask},
                   {"local_rms", s.local_rms.enabled},
                   {"local_rms_window", s.local_rms.window},
                   {"stopping_rules", clean::describe_stopping_rules(s)},
                   {"allow_negative", s.allow_negative},
                   {"clean_border_percent", s.clean_border_percent},
                   {"select_k", s.select_k},
                   {"select", s.select_backend},
                   {"beam_patch", s.beam_patch}};
  j["seconds"] = {{"total", r.seconds.total},
                  {"read", r.seconds.read},
                  {"clean", r.seconds.clean},
                  {"restore", r.seconds.restore},
                  {"write", r.seconds.write},
                  {"setup", result.seconds.setup},
                  {"download", result.seconds.download},
                  {"scale_images", result.seconds.scales},
                  {"noise_map", result.seconds.noise_map},
                  {"select", result.seconds.select},
                  {"minor", result.seconds.minor},
                  {"convolve", result.seconds.convolve},
                  {"restore_stage", result.seconds.restore}};
  j["peak_gpu_memory_bytes"] = result.peak_gpu_bytes;
  if (result.minor_stats.cycles > 0) {
    const clean::MinorCycleStats& m = result.minor_stats;
    j["minor_cycles_gpu"] = {{"clusters", m.clusters},
                             {"longest_chain", m.longest_chain},
                             {"widest_cluster", m.widest_cluster},
                             {"sm_busy_fraction", m.sm_busy_fraction},
                             {"pool_reruns", m.reruns},
                             {"one_cluster_cycles", m.sequential}};
  }
  if (s.auto_mask > 0.0) {
    j["auto_mask"] = {{"sigma", s.auto_mask}, {"cycle", result.auto_mask_cycle}, {"pixels", result.auto_mask_pixels}};
  }
  if (result.local_rms.used) {
    const clean::LocalRmsSummary& l = result.local_rms;
    j["local_rms"] = {{"method", std::string(clean::to_string(s.local_rms.method))},
                      {"window_beams", l.window_beams},
                      {"window_fwhm_pixels", l.window_fwhm_pixels},
                      {"min_rms", l.min_rms},
                      {"max_rms", l.max_rms},
                      {"dropped_at_cycle", l.dropped_at_cycle}};
  }
  if (s.multiscale.enabled) {
    nlohmann::json scales = nlohmann::json::array();
    for (const clean::ScaleSummary& sc : result.scales) {
      scales.push_back({{"size_pixels", sc.size}, {"bias", sc.bias}, {"components", sc.components}, {"flux", sc.flux}});
    }
    j["multiscale"] = {{"shape", std::string(clean::to_string(s.multiscale.shape))},
                       {"scale_bias", s.multiscale.scale_bias},
                       {"gain", s.multiscale.gain},
                       {"scales", scales}};
  }
  return j;
}

std::string components_csv(const clean::CleanResult& result, const std::optional<io::CelestialWcs>& wcs,
                           bool multiscale) {
  // One row per pixel (and scale), in the order they were first cleaned.
  struct Row {
    std::uint32_t x, y, scale;
    double flux;
  };
  std::vector<Row> rows;
  std::unordered_map<std::uint64_t, std::size_t> row_of;
  for (const auto& c : result.components) {
    const std::uint64_t key = (static_cast<std::uint64_t>(c.scale) << 48) | (static_cast<std::uint64_t>(c.y) << 24) | c.x;
    auto [it, inserted] = row_of.try_emplace(key, rows.size());
    if (inserted) rows.push_back({c.x, c.y, c.scale, 0.0});
    rows[it->second].flux += c.flux;
  }
  std::ostringstream out;
  out << (multiscale ? "x,y,ra_deg,dec_deg,flux_jy,scale_pixels\n" : "x,y,ra_deg,dec_deg,flux_jy\n");
  char line[192];
  for (const Row& r : rows) {
    double ra = std::numeric_limits<double>::quiet_NaN(), dec = ra;
    if (wcs) wcs->pixel_to_world(r.x, r.y, &ra, &dec);
    const int len = std::snprintf(line, sizeof line, "%u,%u,%.9f,%.9f,%.9g", r.x, r.y, ra, dec, r.flux);
    out.write(line, len);
    if (multiscale) {
      std::snprintf(line, sizeof line, ",%.6g", result.scales.at(r.scale).size);
      out << line;
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace gpuclean::app

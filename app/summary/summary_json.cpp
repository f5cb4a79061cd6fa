#include "app/summary/summary_json.hpp"

#include "app/version.hpp"

namespace gpuclean::app {

nlohmann::json summary_envelope(const std::string& front_end, const std::string& command) {
  return {{"schema", kSummarySchema},
          {"schema_version", kSummarySchemaVersion},
          {"front_end", front_end},
          {"gpuclean_version", kVersion},
          {"command", command}};
}

nlohmann::json settings_json(const clean::CleanSettings& s) {
  const auto join = s.join();
  return {{"algorithm", s.multiscale.enabled ? std::string("multiscale") : std::string(clean::to_string(s.algorithm))},
          {"niter", s.niter},
          {"gain", s.gain},
          {"mgain", s.mgain},
          {"threshold", s.threshold},
          {"auto_threshold", s.auto_threshold},
          {"stopping_rules", clean::describe_stopping_rules(s)},
          {"auto_mask", s.auto_mask},
          {"local_rms", s.local_rms.enabled},
          {"local_rms_window", s.local_rms.window},
          {"local_rms_method", std::string(clean::to_string(s.local_rms.method))},
          {"allow_negative", s.allow_negative},
          {"clean_border_percent", s.clean_border_percent},
          {"select_k", s.select_k},
          {"select", s.select_backend},
          {"beam_patch", s.beam_patch},
          {"multiscale",
           {{"enabled", s.multiscale.enabled},
            {"shape", std::string(clean::to_string(s.multiscale.shape))},
            {"scale_bias", s.multiscale.scale_bias},
            {"gain", s.multiscale.gain}}},
          {"join", join ? std::string(clean::to_string(*join)) : std::string("independent")},
          {"fit_spectral_pol", s.fit_spectral_pol},
          {"fit_spectral_log_pol", s.fit_spectral_log_pol}};
}

nlohmann::json run_json(const clean::CleanResult& r, const clean::CleanSettings& s,
                        const std::vector<std::size_t>& planes, std::optional<int> gpu) {
  // Blocks that do not apply are null, so that every run has every key.
  nlohmann::json scales = nlohmann::json::array();
  if (s.multiscale.enabled) {
    for (const clean::ScaleSummary& sc : r.components.scales)
      scales.push_back({{"size_pixels", sc.size}, {"bias", sc.bias}, {"components", sc.components}, {"flux", sc.flux}});
  }
  nlohmann::json auto_mask = nullptr;
  if (s.auto_mask > 0.0) auto_mask = {{"cycle", r.diagnostics.auto_mask_cycle}, {"pixels", r.diagnostics.auto_mask_pixels}};
  nlohmann::json local_rms = nullptr;
  if (r.diagnostics.local_rms.used) {
    const clean::LocalRmsSummary& l = r.diagnostics.local_rms;
    local_rms = {{"window_beams", l.window_beams},
                 {"window_fwhm_pixels", l.window_fwhm_pixels},
                 {"min_rms", l.min_rms},
                 {"max_rms", l.max_rms},
                 {"dropped_at_cycle", l.dropped_at_cycle}};
  }
  nlohmann::json minor = nullptr;
  if (r.diagnostics.minor_stats.cycles > 0) {
    const clean::MinorCycleStats& m = r.diagnostics.minor_stats;
    minor = {{"clusters", m.clusters},
             {"longest_chain", m.longest_chain},
             {"widest_cluster", m.widest_cluster},
             {"sm_busy_fraction", m.sm_busy_fraction},
             {"pool_reruns", m.reruns},
             {"one_cluster_cycles", m.sequential}};
  }
  nlohmann::json stages = {{"setup", r.diagnostics.seconds.setup},
                           {"download", r.diagnostics.seconds.download},
                           {"scale_images", r.diagnostics.seconds.scales},
                           {"noise_map", r.diagnostics.seconds.noise_map},
                           {"select", r.diagnostics.seconds.select},
                           {"minor", r.diagnostics.seconds.minor},
                           {"convolve", r.diagnostics.seconds.convolve},
                           {"restore", r.diagnostics.seconds.restore}};
  if (!r.diagnostics.setup_parts.empty()) {  // GPU Clark: where the setup went
    nlohmann::json parts = nlohmann::json::object();
    for (const auto& [part, value] : r.diagnostics.setup_parts) parts[part] = value;
    stages["setup_parts"] = std::move(parts);
  }
  return {{"planes", planes},
          {"iterations", r.stop.iterations},
          {"major_cycles", r.stop.major_cycles},
          {"stop_reason", std::string(clean::to_string(r.stop.reason))},
          {"threshold", r.stop.threshold},
          {"peak_residual", r.stop.peak_residual},
          {"noise_sigma", r.stop.noise_sigma},
          {"reference_frequency_hz", r.components.reference_frequency_hz},
          {"gpu", gpu ? nlohmann::json(*gpu) : nlohmann::json(nullptr)},
          {"peak_gpu_memory_bytes", r.diagnostics.peak_gpu_bytes},
          {"scales", std::move(scales)},
          {"auto_mask", std::move(auto_mask)},
          {"local_rms", std::move(local_rms)},
          {"minor_cycles_gpu", std::move(minor)},
          {"stage_seconds", std::move(stages)}};
}

nlohmann::json plane_json(const PlaneSummary& p) {
  nlohmann::json beam = {{"fitted", p.beam_fitted},
                         {"bmaj_pixels", p.beam.fwhm_major_pixels()},
                         {"bmin_pixels", p.beam.fwhm_minor_pixels()},
                         {"bmaj_arcsec", nullptr},
                         {"bmin_arcsec", nullptr},
                         {"bpa_deg", nullptr}};
  if (p.sky_beam) {
    beam["bmaj_arcsec"] = p.sky_beam->bmaj_arcsec;
    beam["bmin_arcsec"] = p.sky_beam->bmin_arcsec;
    beam["bpa_deg"] = p.sky_beam->bpa_deg;
  }
  return {{"index", p.index},
          {"run", p.run},
          {"rms_residual", p.rms_residual},
          {"model_flux", p.model_flux},
          {"restored_peak", p.restored_peak},
          {"beam", std::move(beam)}};
}

nlohmann::json seconds_json(double read, double clean, std::optional<double> restore, double write) {
  nlohmann::json j = {{"total", read + clean + restore.value_or(0.0) + write}, {"read", read}, {"clean", clean}};
  if (restore) j["restore"] = *restore;
  j["write"] = write;
  return j;
}

}  // namespace gpuclean::app

#include "app/provenance.hpp"

#include <algorithm>
#include <cstdio>

#include "app/version.hpp"

namespace gpuclean::app {

std::vector<io::Keyword> multiscale_keywords(const clean::CleanSettings& s,
                                             const std::vector<clean::ScaleSummary>& scales) {
  if (!s.multiscale.enabled) return {};
  std::string sizes;
  for (const clean::ScaleSummary& sc : scales) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.4g", sizes.empty() ? "" : ",", sc.size);
    sizes += buf;
  }
  return {{"GCMSCALE", true, "multiscale CLEAN"},
          {"GCSCALES", sizes, "scales [pixels]"},
          {"GCSSHAPE", std::string(clean::to_string(s.multiscale.shape)), "scale kernel shape"},
          {"GCSBIAS", s.multiscale.scale_bias, "multiscale scale bias"},
          {"GCSGAIN", s.multiscale.gain, "multiscale gain (sub-minor loop)"}};
}

io::WriteOptions provenance(const RunOptions& o, const std::vector<const clean::CleanResult*>& results,
                            const std::string& device, const std::string& join, const std::vector<std::string>& inputs) {
  const clean::CleanSettings& s = o.settings;
  // A cube's CLEAN runs summed (components) or at their extreme (cycles, final threshold); its
  // stop reason when every run stopped for the same one.
  std::size_t components = 0, cycles = 0;
  double final_threshold = 0.0, min_rms = 0.0;
  std::string stop;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const clean::CleanResult& r = *results[i];
    components += r.stop.iterations;
    cycles = std::max(cycles, r.stop.major_cycles);
    final_threshold = std::max(final_threshold, r.stop.threshold);
    min_rms = i == 0 ? r.diagnostics.local_rms.min_rms : std::min(min_rms, r.diagnostics.local_rms.min_rms);
    const std::string reason(clean::to_string(r.stop.reason));
    stop = i == 0 || stop == reason ? reason : "mixed";
  }
  const bool cube = !join.empty();
  const std::string algorithm = s.multiscale.enabled ? "multiscale" : std::string(clean::to_string(s.algorithm));
  io::WriteOptions w;
  w.overwrite = true;
  w.inputs = inputs;
  w.keywords = {
      {"ORIGIN", std::string("gpuclean ") + kVersion, "GPU Clark CLEAN"},
      {"GCVERSIO", std::string(kVersion), "gpuclean version"},
      {"GCALGO", algorithm, "CLEAN algorithm"},
      {"GCDEVICE", device, "device that ran CLEAN"},
  };
  if (cube) {
    w.keywords.push_back({"GCJOIN", join, "planes joined: channels, polarizations, independent"});
    w.keywords.push_back(
        {"GCFITPOL", static_cast<long long>(s.fit_spectral_pol), "spectral polynomial terms, 0 = none"});
    w.keywords.push_back(
        {"GCFITLPL", static_cast<long long>(s.fit_spectral_log_pol), "log-polynomial spectral terms, 0 = none"});
  }
  const std::vector<io::Keyword> common = {
      {"GCNITER", static_cast<long long>(s.niter), cube ? "maximum number of components per CLEAN"
                                                         : "maximum number of components"},
      {"GCITER", static_cast<long long>(components), cube ? "components cleaned, all planes" : "components cleaned"},
      {"GCMAJOR", static_cast<long long>(cycles), cube ? "major cycles, the most of one CLEAN" : "major cycles"},
      {"GCGAIN", s.gain, "loop gain"},
      {"GCMGAIN", s.mgain, "major-cycle gain"},
      {"GCTHRESH", s.threshold, "absolute threshold"},
      {"GCATHRES", s.auto_threshold, "auto-threshold [sigma]"},
      {"GCAMASK", s.auto_mask, "auto-mask [sigma], 0 = off"},
      {"GCFTHRES", final_threshold, cube ? "threshold in force at the end, the highest" : "threshold in force at the end"},
      {"GCNEGCM", s.allow_negative, "negative components allowed"},
      {"GCSTOP", stop, cube ? "why CLEAN stopped (mixed: not the same in all)" : "why CLEAN stopped"},
  };
  w.keywords.insert(w.keywords.end(), common.begin(), common.end());
  if (!results.empty())
    for (io::Keyword& k : multiscale_keywords(s, results.front()->components.scales)) w.keywords.push_back(std::move(k));
  if (s.local_rms.enabled) {
    w.keywords.push_back({"GCLRMS", true, "thresholds against the local noise map"});
    w.keywords.push_back({"GCLRMSW", s.local_rms.window, "local-RMS window FWHM [beams]"});
    w.keywords.push_back({"GCLRMSME", std::string(clean::to_string(s.local_rms.method)), "local-RMS method"});
    w.keywords.push_back({"GCLRMSMN", min_rms, "lowest local RMS [Jy/beam]"});
  }
  for (std::size_t i = 0; i < o.command_line.size(); i += 70) w.history.push_back(o.command_line.substr(i, 70));
  char line[96];
  std::snprintf(line, sizeof line, "gpuclean %s: %s on %s, %zu components, stop %s", kVersion,
                algorithm.c_str(), device.c_str(), components, stop.c_str());
  w.history.push_back(line);
  return w;
}

}  // namespace gpuclean::app

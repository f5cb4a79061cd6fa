#include "app/run_report.hpp"

#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "app/summary/summary_json.hpp"

namespace gpuclean::app {

nlohmann::json make_summary_json(const RunReport& r, const clean::CleanResult& result, const RunOptions& o) {
  nlohmann::json j = summary_envelope("clean", o.command_line);
  j["input"] = "image";
  j["dirty"] = r.dirty;
  j["psf"] = r.psf;
  j["output"] = r.output;
  j["device"] = r.device;
  j["settings"] = settings_json(o.settings);
  j["image"] = {{"width", r.width}, {"height", r.height}, {"nan_pixels", r.nan_pixels},
                {"dirty_on_device", r.dirty_on_device}};
  j["runs"] = {run_json(result, o.settings, {0}, std::nullopt)};
  j["planes"] = {plane_json({0, 0, r.rms_residual, r.model_flux, r.restored_peak, r.beam_pixels, r.beam, r.beam_fitted})};
  j["seconds"] = seconds_json(r.seconds.read, r.seconds.clean, r.seconds.restore, r.seconds.write);
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
  for (const auto& c : result.components.list) {
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
      std::snprintf(line, sizeof line, ",%.6g", result.components.scales.at(r.scale).size);
      out << line;
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace gpuclean::app

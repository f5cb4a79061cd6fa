// The summary schema's writers and its check of the required keys: summaries built from known
// results conform, and the check finds each way a summary can break it. (The CLI tests check the
// front ends' written files against the same lists.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "app/batch/batch_report.hpp"
#include "app/run_report.hpp"
#include "app/summary/summary_json.hpp"
#include "app/summary/summary_schema.hpp"

namespace app = gpuclean::app;
namespace clean = gpuclean::clean;
using nlohmann::json;
using Problems = std::vector<std::string>;

namespace {

clean::CleanResult a_result() {
  clean::CleanResult r;
  r.stop.iterations = 120;
  r.stop.major_cycles = 4;
  r.stop.reason = clean::StopReason::kMaxIterations;
  r.stop.peak_residual = 0.25f;
  r.stop.threshold = 0.002;
  r.stop.noise_sigma = 0.0007;
  r.diagnostics.seconds.minor = 0.5;
  r.components.scales = {{0.0, 1.0, 80, 1.5}, {8.0, 0.6, 40, 2.5}};
  r.diagnostics.auto_mask_cycle = 3;
  r.diagnostics.auto_mask_pixels = {10, 20};
  return r;
}

app::RunOptions some_options() {
  app::RunOptions o;
  o.dirty = "d.fits";
  o.psf = "p.fits";
  o.output = "o.fits";
  o.command_line = "gpuclean d.fits p.fits -o o.fits --multiscale --auto-mask 5";
  o.settings.multiscale.enabled = true;
  o.settings.auto_mask = 5.0;
  return o;
}

json single_summary() {
  app::RunReport report;
  report.dirty = "d.fits";
  report.psf = "p.fits";
  report.output = "o.fits";
  report.device = "cpu";
  report.width = report.height = 64;
  report.rms_residual = 0.001;
  report.model_flux = 4.0;
  report.restored_peak = 1.2;
  report.beam = clean::SkyBeam{10.0, 8.0, 45.0};
  report.seconds = {0.1, 1.0, 0.2, 0.3, 0.0};
  return app::make_summary_json(report, a_result(), some_options());
}

}  // namespace

TEST(SummarySchema, TheSingleCommandsSummaryConformsAndSaysWhatTheRunDid) {
  const json j = single_summary();
  EXPECT_EQ(app::summary_schema_problems(j), Problems{}) << j.dump(1);
  EXPECT_EQ(j["schema"], "gpuclean-summary");
  EXPECT_EQ(j["schema_version"], 2);
  EXPECT_EQ(j["front_end"], "clean");
  EXPECT_EQ(j["command"], "gpuclean d.fits p.fits -o o.fits --multiscale --auto-mask 5");
  const json& run = j["runs"][0];
  EXPECT_EQ(run["iterations"], 120);
  EXPECT_EQ(run["stop_reason"], "niter");
  EXPECT_EQ(run["planes"], json::array({0}));
  EXPECT_EQ(run["scales"].size(), 2u);
  EXPECT_EQ(run["scales"][1]["components"], 40);
  EXPECT_EQ(run["auto_mask"]["pixels"], json::array({10, 20}));
  EXPECT_TRUE(run["local_rms"].is_null());  // not used: null, the key still there
  EXPECT_DOUBLE_EQ(run["stage_seconds"]["minor"].get<double>(), 0.5);
  EXPECT_EQ(j["settings"]["algorithm"], "multiscale");
  EXPECT_EQ(j["settings"]["join"], "independent");
  EXPECT_DOUBLE_EQ(j["planes"][0]["beam"]["bpa_deg"].get<double>(), 45.0);
  EXPECT_DOUBLE_EQ(j["planes"][0]["model_flux"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["seconds"]["total"].get<double>(), 0.1 + 1.0 + 0.2 + 0.3);
}

TEST(SummarySchema, AGpuRunsSetupPartsAreAnOptionalBlockOfItsStages) {
  clean::CleanResult r = a_result();
  clean::CleanSettings s;
  EXPECT_FALSE(app::run_json(r, s, {0}, 0)["stage_seconds"].contains("setup_parts"));  // CPU runs: none
  r.diagnostics.setup_parts = {{"resources", 0.25}, {"fft_plans", 0.125}, {"fft_plans_made", 4}};
  const json run = app::run_json(r, s, {0}, 0);
  const json& parts = run["stage_seconds"]["setup_parts"];
  EXPECT_DOUBLE_EQ(parts["resources"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(parts["fft_plans"].get<double>(), 0.125);
  EXPECT_DOUBLE_EQ(parts["fft_plans_made"].get<double>(), 4.0);
  json j = single_summary();
  j["runs"][0] = run;
  EXPECT_EQ(app::summary_schema_problems(j), Problems{});
}

TEST(SummarySchema, TheCheckFindsEachBreak) {
  const json good = single_summary();
  auto broken = [&](auto change) {
    json j = good;
    change(j);
    return app::summary_schema_problems(j);
  };
  EXPECT_EQ(broken([](json& j) { j["runs"][0].erase("stop_reason"); }), Problems{"runs[0].stop_reason: missing"});
  EXPECT_EQ(broken([](json& j) { j["planes"][0]["beam"].erase("bmaj_arcsec"); }),
            Problems{"planes[0].beam.bmaj_arcsec: missing"});
  EXPECT_EQ(broken([](json& j) { j["settings"].erase("gain"); }), Problems{"settings.gain: missing"});
  EXPECT_EQ(broken([](json& j) { j.erase("command"); }), Problems{"command: missing"});
  EXPECT_EQ(broken([](json& j) { j["schema_version"] = 1; }), Problems{"schema_version: not 2"});
  EXPECT_EQ(broken([](json& j) { j["front_end"] = "imaging"; }), Problems{"front_end: unknown \"imaging\""});
  EXPECT_EQ(broken([](json& j) { j["runs"] = json::array(); }), (Problems{"runs: empty", "planes[0].run: no such run"}));
  EXPECT_EQ(broken([](json& j) { j["planes"][0]["run"] = 3; }),
            (Problems{"runs[0].planes: 0 is not a plane of this run", "planes[0].run: no such run"}));
  // A cube's summary needs its own keys too.
  EXPECT_EQ(broken([](json& j) { j["front_end"] = "cube"; }),
            (Problems{"input: image is not a cube input", "channels: missing", "stokes: missing", "weights: missing",
                      "planes_per_second: missing", "planes[0].channel: missing", "planes[0].stokes: missing",
                      "planes[0].frequency_hz: missing", "planes[0].weight: missing"}));
}

TEST(SummarySchema, ABatchReportCarriesEachObservationsRunsAndConforms) {
  std::vector<app::ObservationOutcome> outcomes(2);
  outcomes[0].index = 0;
  outcomes[0].name = "a";
  outcomes[0].status = app::OutcomeStatus::kDone;
  outcomes[0].device = "gpu 1";
  outcomes[0].seconds = 2.5;
  outcomes[0].summary = single_summary();
  outcomes[1].index = 1;
  outcomes[1].name = "b";
  outcomes[1].status = app::OutcomeStatus::kFailed;
  outcomes[1].reason = "not a readable FITS file";
  outcomes[1].exit_code = 3;
  const app::BatchTotals totals = app::summarize(outcomes, 3.0, 1.0, {"gpu 1"});
  const json j = app::batch_report_json(outcomes, totals, app::Shard{}, "m.csv", "gpuclean batch m.csv");
  EXPECT_EQ(app::summary_schema_problems(j), Problems{}) << j.dump(1);
  EXPECT_EQ(j["front_end"], "batch");
  EXPECT_EQ(j["command"], "gpuclean batch m.csv");
  const json& done = j["observations"][0];
  EXPECT_EQ(done["runs"], single_summary()["runs"]);  // the observation's own summary's
  EXPECT_EQ(done["planes"], single_summary()["planes"]);
  EXPECT_EQ(done["device"], "gpu 1");                  // the batch's view, not the summary's "cpu"
  EXPECT_DOUBLE_EQ(done["seconds"]["total"].get<double>(), 2.5);
  EXPECT_FALSE(done.contains("schema"));
  EXPECT_FALSE(j["observations"][1].contains("runs"));
  json no_runs = j;
  no_runs["observations"][0].erase("runs");
  EXPECT_EQ(app::summary_schema_problems(no_runs), Problems{"observations[0].runs: missing"});
}

TEST(SummarySchema, AChannelSetsOutcomeComesFromItsCubeSummary) {
  json cube = app::summary_envelope("cube", "gpuclean obs --wsclean-channels");
  clean::CleanSettings s;
  s.join_channels = true;
  cube["settings"] = app::settings_json(s);
  clean::CleanResult r = a_result();
  cube["runs"] = {app::run_json(r, s, {0, 1}, 0)};
  r.stop.iterations = 30;
  r.stop.major_cycles = 7;
  cube["runs"].push_back(app::run_json(r, s, {2}, 1));
  cube["planes"] = {app::plane_json({0, 0, 3.0, 1.0, 0, {}, {}, true}), app::plane_json({1, 0, 4.0, 2.0, 0, {}, {}, true}),
                    app::plane_json({2, 1, 0.0, 3.0, 0, {}, {}, true})};
  cube["seconds"] = app::seconds_json(1.0, 2.0, std::nullopt, 0.5);
  app::ObservationOutcome o;
  app::record_cube_summary(o, cube);
  EXPECT_EQ(o.iterations, 150u);
  EXPECT_EQ(o.major_cycles, 7u);
  EXPECT_EQ(o.stop_reason, "niter");
  EXPECT_EQ(o.mode, "channels");
  EXPECT_DOUBLE_EQ(o.rms_residual, 5.0 / std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(o.model_flux, 2.0);
  EXPECT_DOUBLE_EQ(o.clean_seconds, 2.0);
  EXPECT_EQ(o.summary["runs"][1]["gpu"], 1);
}

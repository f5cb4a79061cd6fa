// One function writes the provenance of every FITS output (app/provenance.hpp): a cube's files
// carry every keyword a one-image run's do (the cube copy had drifted: no GCSTOP, GCNEGCM,
// GCAMASK, GCMAJOR or GCLRMS*), plus the cube's own.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <variant>

#include "app/provenance.hpp"

namespace ga = gpuclean::app;
namespace gc = gpuclean::clean;

namespace {

std::set<std::string> names(const gpuclean::io::WriteOptions& w) {
  std::set<std::string> out;
  for (const auto& k : w.keywords) out.insert(k.name);
  return out;
}

const gpuclean::io::Keyword& keyword(const gpuclean::io::WriteOptions& w, const std::string& name) {
  const auto it = std::find_if(w.keywords.begin(), w.keywords.end(), [&](const auto& k) { return k.name == name; });
  EXPECT_NE(it, w.keywords.end()) << name;
  return *it;
}

}  // namespace

TEST(Provenance, ACubeSaysEverythingAOneImageRunSays) {
  ga::RunOptions o;
  o.settings.local_rms.enabled = true;
  o.settings.auto_mask = 5.0;
  o.command_line = "gpuclean NAME --wsclean-channels -o OUT --join-channels --local-rms --auto-mask 5";
  gc::CleanResult a, b;
  a.stop.iterations = 10, b.stop.iterations = 32;
  a.stop.major_cycles = 3, b.stop.major_cycles = 5;
  a.stop.reason = gc::StopReason::kThreshold, b.stop.reason = gc::StopReason::kMaxIterations;
  a.diagnostics.local_rms.min_rms = 2e-3, b.diagnostics.local_rms.min_rms = 1e-3;
  const auto one = ga::provenance(o, {&a}, "gpu", "", {"d.fits", "p.fits"});
  const auto cube = ga::provenance(o, {&a, &b}, "gpu", "channels", {"d.fits"});
  const std::set<std::string> one_names = names(one), cube_names = names(cube);
  for (const std::string& n : one_names) EXPECT_TRUE(cube_names.count(n)) << n << " is missing from a cube's outputs";
  for (const char* n : {"GCSTOP", "GCNEGCM", "GCAMASK", "GCMAJOR", "GCLRMS", "GCLRMSW", "GCLRMSME", "GCLRMSMN"})
    EXPECT_TRUE(one_names.count(n)) << n;
  for (const char* n : {"GCJOIN", "GCFITPOL", "GCFITLPL"}) {
    EXPECT_TRUE(cube_names.count(n)) << n;
    EXPECT_FALSE(one_names.count(n)) << n;
  }
  EXPECT_EQ(std::get<long long>(keyword(cube, "GCITER").value), 42);
  EXPECT_EQ(std::get<long long>(keyword(cube, "GCMAJOR").value), 5);
  EXPECT_EQ(std::get<std::string>(keyword(cube, "GCSTOP").value), "mixed");
  EXPECT_EQ(std::get<std::string>(keyword(one, "GCSTOP").value), "threshold");
  EXPECT_DOUBLE_EQ(std::get<double>(keyword(cube, "GCLRMSMN").value), 1e-3);
  // HISTORY: the command line in 70-character pieces, then the summary line.
  for (const auto* w : {&one, &cube}) {
    ASSERT_EQ(w->history.size(), 3u);
    EXPECT_EQ(w->history[0] + w->history[1], o.command_line);
  }
  EXPECT_NE(cube.history.back().find("42 components, stop mixed"), std::string::npos) << cube.history.back();
}

// The WSClean option table (app/wsclean/wsclean_option.hpp): every option of Debian's WSClean
// (its -help) is a row; every row is complete; every refused option is refused before any work
// with one line naming it and exit 2; the 3.1 spellings read as their options; docs/imaging.md's
// table is the table's rendering (issue 44).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/failure.hpp"
#include "app/image/image_args.hpp"
#include "app/outer/wsclean_options.hpp"
#include "app/wsclean/wsclean_option.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace gpuclean {
namespace {

using app::ImageUse;
using app::WscleanOption;
using Words = std::vector<std::string>;

/// Values an option takes, by its metavar: numbers where numbers go.
Words sample_values(const WscleanOption& row) {
  if (row.values == app::kWeightValues) return {"natural"};
  Words v;
  for (int i = 0; i < row.values; ++i) v.push_back("1");
  return v;
}

app::Failure refusal(const Words& args) {
  try {
    app::parse_image_args(args);
  } catch (...) {
    return app::classify(std::current_exception());
  }
  return {};
}

TEST(WscleanTable, EveryRowIsComplete) {
  std::set<std::string> names;
  for (const WscleanOption& row : app::wsclean_options()) {
    SCOPED_TRACE(row.name());
    EXPECT_FALSE(row.meaning.empty());
    EXPECT_FALSE(row.section.empty());
    for (const std::string& n : row.names) {
      EXPECT_TRUE(names.insert(n).second) << "-" << n << " twice";
      EXPECT_EQ(app::find_wsclean_option(n), &row);
      EXPECT_NE(n.front(), '-');
    }
    if (row.image != ImageUse::kYes) EXPECT_FALSE(row.gpuclean.empty()) << "what gpuclean does must be said";
    EXPECT_EQ(static_cast<bool>(row.apply), row.image == ImageUse::kYes || row.image == ImageUse::kMapped);
    if (row.values > 0) EXPECT_FALSE(row.metavar.empty());
  }
  EXPECT_EQ(app::find_wsclean_option("no-such-option"), nullptr);
  // WSClean 3.7's parser takes 207 names and 3.1's 34 more (counted from their sources, issue 44).
  EXPECT_GE(names.size(), 207u + 34u - 1);
}

// Every option of the wsclean on PATH (Debian's 3.1; the trixie stage's 3.6) is a row.
TEST(WscleanTable, EveryOptionOfTheInstalledWscleanIsARow) {
  test::TempDir dir;
  const test::CommandResult help = test::run_command(dir, "wsclean --help");
  if (help.out.find("-niter") == std::string::npos) GTEST_SKIP() << "no wsclean on PATH";
  // WSClean's -help lists "-option <value>" at a line's start; some lines list two ("-a / -b").
  const std::regex option(R"((?:^|\s/\s|^\s*)-([a-z][a-z0-9-]*))");
  std::set<std::string> listed;
  std::istringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '-') continue;
    for (std::sregex_iterator it(line.begin(), line.end(), option), end; it != end; ++it) listed.insert((*it)[1]);
  }
  // Names WSClean 3.1's help lists that its own parser refuses (the summary of issue 44).
  for (const char* unparsed : {"no-normalize-for-weighting", "scalar-beam", "wtowers-kernel-size",
                               "wtowers-w-kernel-size"})
    listed.erase(unparsed);
  ASSERT_GT(listed.size(), 150u) << help.out.substr(0, 500);
  for (const std::string& name : listed) EXPECT_NE(app::find_wsclean_option(name), nullptr) << "-" << name;
}

// Each refused option is refused by the parser (before any MS is opened) with one line that
// names it, exit 2.
TEST(WscleanTable, RefusedOptionsSayWhyInOneLine) {
  std::size_t refused = 0;
  for (const WscleanOption& row : app::wsclean_options()) {
    if (row.image != ImageUse::kRefused && row.image != ImageUse::kNotYet) continue;
    for (const std::string& name : row.names) {
      SCOPED_TRACE(name);
      Words args = {"-size", "64", "64", "-scale", "1asec", "-" + name};
      const Words v = sample_values(row);
      args.insert(args.end(), v.begin(), v.end());
      args.push_back("a.ms");
      const app::Failure f = refusal(args);
      EXPECT_EQ(f.code, app::ExitCode::kUsage) << f.message;
      EXPECT_EQ(f.message.rfind("-" + name + " is ", 0), 0u) << f.message;
      EXPECT_EQ(f.message.find('\n'), std::string::npos) << f.message;
      ++refused;
    }
  }
  EXPECT_GE(refused, 50u);
}

// A value a row does not take yet is refused the same way (-local-rms-method rms-with-min).
TEST(WscleanTable, ValuesNotTakenYetAreRefused) {
  for (const Words& extra : std::vector<Words>{{"-local-rms-method", "rms-with-min"},
                                               {"-visibility-weighting-mode", "squared"},
                                               {"-dd-psf-grid", "2", "2"},
                                               {"-model-storage-manager", "sisco"},
                                               {"-component-optimization", "linear-solver"}}) {
    SCOPED_TRACE(extra.front());
    Words args = {"-size", "64", "64", "-scale", "1asec"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("a.ms");
    const app::Failure f = refusal(args);
    EXPECT_EQ(f.code, app::ExitCode::kUsage) << f.message;
    EXPECT_EQ(f.message.rfind(extra.front() + " ", 0), 0u) << f.message;
  }
}

// The binary: a refused option exits 2 with one line on stderr, before the MS is opened (a file
// that is no MS), and writes nothing.
TEST(WscleanTable, RefusalWritesNothing) {
  test::TempDir dir;
  const std::string not_an_ms = dir.file("a.ms");
  std::ofstream(not_an_ms) << "not a MeasurementSet";
  for (const char* option : {"-iuwt", "-mwa-path /x", "-shift 1 2", "-pol qu -join-polarizations", "-save-uv"}) {
    SCOPED_TRACE(option);
    const test::CommandResult r = test::run_gpuclean(
        dir, std::string("image -size 64 64 -scale 1asec -niter 10 ") + option + " -name " + dir.file("out") + " " + not_an_ms);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
    std::size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      files += e.path().filename().string().rfind("out", 0) == 0;
    EXPECT_EQ(files, 0u);
  }
}

TEST(WscleanTable, AnUnknownOptionStaysAnError) {
  const app::Failure f = refusal({"-size", "64", "64", "-scale", "1asec", "-no-such-option", "a.ms"});
  EXPECT_EQ(f.code, app::ExitCode::kUsage);
  EXPECT_NE(f.message.find("-no-such-option"), std::string::npos) << f.message;
  const app::Failure missing = refusal({"-size", "64", "64", "-scale"});
  EXPECT_EQ(missing.code, app::ExitCode::kUsage);
  EXPECT_NE(missing.message.find("-scale needs 1 value"), std::string::npos) << missing.message;
}

// WSClean 3.1's spellings (and 3.7's deprecated ones) read as their options.
TEST(WscleanTable, OldSpellingsReadAsTheirOptions) {
  const app::ImageOptions o = app::parse_image_args(
      {"-size", "64", "64", "-scale", "1asec", "-channelsout", "2", "-absmem", "3", "-nwlayers-factor", "2",
       "-no-mfs-weighting", "-cleanborder", "5", "-threshold", "1mJy", "a.ms"});
  EXPECT_EQ(o.run.channels_out, 2u);
  EXPECT_EQ(o.resources.abs_mem_gb, 3.0);
  EXPECT_TRUE(o.no_mf_weighting);
  EXPECT_EQ(o.deconvolution.settings.clean_border_percent, 5.0);
  EXPECT_DOUBLE_EQ(o.deconvolution.settings.threshold, 1e-3);
  ASSERT_EQ(o.notes.size(), 1u);  // -nwlayers-factor is mapped: its note
  EXPECT_EQ(o.notes[0].rfind("-nwlayers-factor 2: ", 0), 0u) << o.notes[0];
}

// Options with meaning: what they set.
TEST(WscleanTable, ResourceGridderAndLoopOptions) {
  const app::ImageOptions o = app::parse_image_args(
      {"-size", "64", "64", "-scale", "1asec", "-mem", "50", "-abs-mem", "2", "-gridder", "wgridder",
       "-wgridder-accuracy", "1e-5", "-deconvolution-threads", "3", "-j", "5", "-mgain-boosting", "1.5",
       "-auto-mask-nmiter", "2", "-major-iteration-mode", "dual", "-local-rms-strength", "0.5", "-circular-beam",
       "-beam-fitting-size", "3", "-minuv-l", "80", "-maxuv-l", "1e5", "-log-time", "-quiet", "a.ms"});
  EXPECT_DOUBLE_EQ(o.run.host_memory_fraction, 0.5);
  EXPECT_DOUBLE_EQ(o.run.host_memory_bytes, 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(o.run.epsilon, 1e-5);
  EXPECT_EQ(o.deconvolution.settings.threads, 3);
  EXPECT_EQ(o.run.threads, 5);
  EXPECT_EQ(o.deconvolution.mgain_boosting, 1.5);
  EXPECT_EQ(o.deconvolution.auto_mask_nmiter, 2u);
  EXPECT_EQ(o.deconvolution.major_iteration_mode, app::MajorIterationMode::kDual);
  EXPECT_EQ(o.deconvolution.settings.local_rms.strength, 0.5);
  EXPECT_FALSE(o.deconvolution.settings.local_rms.enabled);  // WSClean: the strength alone turns nothing on
  EXPECT_TRUE(o.beam.circular);
  EXPECT_EQ(o.beam.fitting_size, 3.0);
  EXPECT_EQ(o.run.weighting.min_uv_lambda, 80.0);
  EXPECT_EQ(o.run.weighting.max_uv_lambda, 1e5);
  EXPECT_TRUE(o.log_time);
  EXPECT_EQ(o.verbosity, app::Verbosity::kQuiet);
  // The gridder's accuracy is checked: finer than the float grid's floor is refused.
  EXPECT_EQ(refusal({"-size", "64", "64", "-scale", "1asec", "-wgridder-accuracy", "1e-7", "a.ms"}).code,
            app::ExitCode::kUsage);
  EXPECT_EQ(refusal({"-size", "64", "64", "-scale", "1asec", "-baseline-averaging", "0", "a.ms"}).code,
            app::ExitCode::kUsage);  // WSClean 3.1 and 3.7 refuse 0
  EXPECT_EQ(refusal({"-size", "64", "64", "-scale", "1asec", "-join-channels", "a.ms"}).code,
            app::ExitCode::kUsage);  // one channel to join
}

// The hook reads WSClean's command line through the same table: values are taken by arity (a
// negative value is a value), aliases read as their option, refusals and speed switches said.
TEST(WscleanTable, TheHookReadsWsclean) {
  const Words wsclean = {"wsclean", "-weight", "briggs", "-0.5", "-local-rms-window", "30", "-nonegative",
                         "-multiscale", "-no-fast-subminor", "-python-deconvolution", "x.py", "a.ms"};
  const Words carried = app::carried_options(wsclean, {});
  const std::string text = [&] {
    std::string s;
    for (const std::string& w : carried) s += w + " ";
    return s;
  }();
  EXPECT_NE(text.find("--local-rms --local-rms-window 30"), std::string::npos) << text;
  EXPECT_NE(text.find("--no-negative"), std::string::npos) << text;
  EXPECT_NE(text.find("--multiscale"), std::string::npos) << text;
  EXPECT_EQ(app::hook_ignored(wsclean), Words{"-no-fast-subminor"});
  EXPECT_EQ(app::hook_refusal(wsclean), "");
  EXPECT_NE(app::hook_refusal({"wsclean", "-iuwt", "a.ms"}).find("-iuwt"), std::string::npos);
  // -negative after -no-negative undoes it.
  const Words undone = app::carried_options({"wsclean", "-no-negative", "-negative"}, {});
  EXPECT_EQ(std::find(undone.begin(), undone.end(), "--no-negative"), undone.end());
}

// docs/imaging.md holds the table's rendering between its markers (scripts/options-doc.sh writes it).
TEST(WscleanTable, TheDocsTableIsTheTables) {
  std::ifstream in(test::source_dir() + "/docs/imaging.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), {});
  const std::string begin = "<!-- wsclean-options: begin -->\n", end = "<!-- wsclean-options: end -->";
  const std::size_t a = doc.find(begin), b = doc.find(end);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(doc.substr(a + begin.size(), b - a - begin.size()), app::wsclean_options_markdown())
      << "docs/imaging.md's option table is stale: run scripts/options-doc.sh and commit it";
}

}  // namespace
}  // namespace gpuclean

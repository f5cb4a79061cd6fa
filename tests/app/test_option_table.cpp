// The option table (app/options/option_rows.cpp) against what it generates: the parser's defaults,
// checks and --help, and the committed docs/options.md.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "app/cli.hpp"
#include "app/option_table.hpp"
#include "app/options/option_row.hpp"
#include "app/options/options_markdown.hpp"
#include "app/wsclean/wsclean_option.hpp"
#include "clean/errors.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/run_command.hpp"
#include "tests/support/temp_dir.hpp"

namespace gpuclean::app {
namespace {

constexpr OptionSection kSections[] = {OptionSection::kOutput, OptionSection::kObservation, OptionSection::kOutputFile,
                                       OptionSection::kCubeInput, OptionSection::kCube};

// Every row's option, each showing its member's default as constructed.
struct EveryRow {
  CLI::App app;
  RunOptions r;
  EveryRow() {
    for (OptionSection s : kSections) add_option_rows(app, r, s);
    for (CLI::Option* o : app.get_options()) o->capture_default_str();
  }
};

TEST(OptionTable, EveryDefaultIsTheMembersOwn) {
  EveryRow all;
  for (const OptionRow& row : option_rows()) {
    if (row.default_text.empty()) continue;
    EXPECT_EQ(all.app.get_option(row.names.substr(row.names.rfind("--")))->get_default_str(), row.default_text)
        << row.names;
  }
}

// The single command's WSClean counterparts come from the WSClean option table: each names a row
// of the single command, and no single-command option has two.
TEST(OptionTable, WscleanCounterpartsNameSingleCommandOptions) {
  std::set<std::string> carried;
  for (const WscleanOption& w : wsclean_options()) {
    if (w.hook != HookUse::kCarried && w.hook != HookUse::kMeta && w.hook != HookUse::kLayout) {
      EXPECT_TRUE(w.carries.empty()) << w.name();
      continue;
    }
    EXPECT_NE(find_option_row(w.carries), nullptr) << "-" << w.name() << " carries --" << w.carries;
    for (const std::string& flag : w.implies) EXPECT_NE(find_option_row(flag), nullptr) << flag;
    if (!w.negates) EXPECT_TRUE(carried.insert(w.carries).second) << "--" << w.carries << " twice";
  }
  EXPECT_GE(carried.size(), 20u);  // what the hook carried before the WSClean table, and -local-rms-strength
  EXPECT_EQ(wsclean_counterpart("auto-mask")->name(), "auto-mask");
  EXPECT_EQ(wsclean_counterpart("threshold")->name(), "abs-threshold");
  EXPECT_EQ(wsclean_counterpart("no-negative")->name(), "no-negative");
  EXPECT_EQ(wsclean_counterpart("select-k"), nullptr);
}

TEST(OptionTable, LongNamesAreUniqueAndFound) {
  std::set<std::string> seen;
  for (const OptionRow& row : option_rows()) {
    EXPECT_TRUE(seen.insert(row.long_name()).second) << row.names;
    EXPECT_EQ(find_option_row(row.long_name()), &row);
  }
  EXPECT_EQ(find_option_row("no-such-option"), nullptr);
}

// What a row's extra arguments need so that its own check is the one that speaks.
std::vector<std::string> context_of(const OptionRow& row) {
  std::vector<std::string> args;
  if (!row.needs.empty()) args.push_back(row.needs);
  if (row.long_name().rfind("fit-spectral", 0) == 0) args.push_back("--join-channels");
  return args;
}

std::string text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The command line's answer to `args` (parse, then the settings' check): empty when accepted.
std::string refusal(const std::vector<std::string>& args) {
  try {
    clean::validate(parse_run_options(args).settings);
  } catch (const CLI::ParseError& e) {
    return e.what();
  } catch (const clean::InvalidSettings& e) {
    return e.what();
  }
  return {};
}

TEST(OptionTable, RangesRefuseWhatLiesOutsideWithTheOptionsName) {
  int checked = 0;
  for (const OptionRow& row : option_rows()) {
    const Range& range = row.range;
    if (!range.low && !range.high) continue;
    const std::string name = "--" + row.long_name();
    std::vector<std::string> outside;
    if (range.low) outside.push_back(text(range.low_open ? *range.low : *range.low - 1));
    if (range.high) outside.push_back(text(range.high_open ? *range.high : *range.high + 1));
    for (const std::string& v : outside) {
      std::vector<std::string> args = context_of(row);
      args.insert(args.end(), {name, v});
      const std::string why = refusal(args);
      EXPECT_NE(why.find(name), std::string::npos) << name << " " << v << " was refused with: '" << why << "'";
      ++checked;
    }
    std::vector<double> edges;  // a closed end is in
    if (range.low && !range.low_open) edges.push_back(*range.low);
    if (range.high && !range.high_open) edges.push_back(*range.high);
    for (double edge : edges) {
      std::vector<std::string> args = context_of(row);
      args.insert(args.end(), {name, text(edge)});
      EXPECT_EQ(refusal(args), "") << name << " " << edge;
    }
  }
  EXPECT_GE(checked, 20);
}

TEST(OptionTable, ChoicesRefuseOtherNames) {
  for (const OptionRow& row : option_rows()) {
    if (row.binding.choices.empty()) continue;
    std::vector<std::string> args = context_of(row);
    args.insert(args.end(), {"--" + row.long_name(), "no-such-choice"});
    EXPECT_NE(refusal(args).find("--" + row.long_name()), std::string::npos) << row.names;
    args.back() = row.binding.choices.back();
    EXPECT_EQ(refusal(args), "") << row.names;
  }
}

TEST(OptionTable, APartOfALineSaysWhatItGives) {
  const PartParse part = parse_part({"--gain=0.2", "-q", "--multiscale-gain", "0.3"});
  EXPECT_EQ(part.given, (std::vector<std::string>{"gain", "multiscale-gain", "quiet"}));
  EXPECT_EQ(part.options.settings.gain, 0.2);
  EXPECT_EQ(part.options.settings.multiscale.gain, 0.3);  // --multiscale may come from WSClean's line
  EXPECT_TRUE(parse_part({}).given.empty());
  EXPECT_THROW(parse_part({"--no-such-option"}), CLI::ParseError);
  EXPECT_THROW(parse_part({"--device", "tpu"}), CLI::ParseError);
}

TEST(OptionTable, PythonTableHasEveryRowInHelpOrder) {
  const std::vector<OptionInfo> table = run_option_table();
  ASSERT_EQ(table.size(), option_rows().size());
  EXPECT_EQ(table.front().name, "output");  // the ungrouped options first, as --help
  for (const OptionInfo& o : table) {
    if (o.name == "gain") {
      EXPECT_EQ(o.range, "(0, 1]");
      EXPECT_EQ(o.wsclean, "-gain");
      EXPECT_EQ(o.wsclean_reach, "meta");
    }
    if (o.name == "algorithm") {
      EXPECT_EQ(o.range, "clark, hogbom");
    }
    if (o.name == "beam-shape") {
      EXPECT_EQ(o.values, 3);
    }
  }
}

// The long option names in a --help text or docs/options.md ("--niter", the first on each line).
std::set<std::string> names_in(const std::string& text, const std::regex& pattern) {
  std::set<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, pattern)) names.insert(m[1]);
  }
  return names;
}

std::string committed_doc() {
  std::ifstream in(test::source_dir() + "/docs/options.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(OptionsDoc, TheCommittedDocIsTheTablesRendering) {
  const std::string doc = committed_doc(), rendering = options_markdown();
  std::istringstream committed(doc), rendered(rendering);
  for (int line = 1;; ++line) {  // the first line that differs, rather than both texts
    std::string a, b;
    const bool in_committed = static_cast<bool>(std::getline(committed, a));
    const bool in_rendered = static_cast<bool>(std::getline(rendered, b));
    if (!in_committed && !in_rendered) break;
    ASSERT_TRUE(in_committed == in_rendered && a == b)
        << "docs/options.md line " << line << " is stale: run scripts/options-doc.sh and commit it\n  committed: "
        << a << "\n  the table: " << b;
  }
  EXPECT_EQ(doc.size(), rendering.size()) << "docs/options.md is stale: run scripts/options-doc.sh and commit it";
}

TEST(OptionsDoc, ListsEveryOptionThatHelpPrintsAndNoOther) {
  test::TempDir tmp;
  const test::CommandResult help = test::run_gpuclean(tmp, "--help");
  ASSERT_EQ(help.code, 0) << help.err;
  std::set<std::string> printed = names_in(help.out, std::regex(R"(^  (?:-\w,)?(--[\w-]+))"));
  printed.erase("--help");
  printed.erase("--version");
  const std::set<std::string> documented = names_in(committed_doc(), std::regex(R"(^\| `(?:-\w, )?(--[\w-]+))"));
  EXPECT_EQ(printed, documented);
  EXPECT_GE(documented.size(), 50u);
}

}  // namespace
}  // namespace gpuclean::app

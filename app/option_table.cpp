#include "app/option_table.hpp"

#include <algorithm>

#include "app/cli.hpp"
#include "app/options/option_row.hpp"
#include "app/wsclean/wsclean_option.hpp"

namespace gpuclean::app {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The single command's parser, fed `args` as the command line would be.
std::unique_ptr<Cli> parsed(const std::vector<std::string>& args) {
  auto cli = make_cli();
  // CLI11 parses a reversed vector of arguments (the program name left out).
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  cli->app->parse(reversed);
  return cli;
}

}  // namespace

std::vector<OptionInfo> run_option_table() {
  // --help's order: the ungrouped options first, then each group where it first appears.
  std::vector<std::string> groups = {""};
  for (const OptionRow& row : option_rows())
    if (std::find(groups.begin(), groups.end(), row.group) == groups.end()) groups.push_back(row.group);
  std::vector<OptionInfo> table;
  for (const std::string& group : groups) {
    for (const OptionRow& row : option_rows()) {
      if (row.group != group) continue;
      const std::string range = row.binding.choices.empty() ? row.range.text() : joined(row.binding.choices);
      // WSClean's counterpart is the WSClean option table's (the row that carries this option).
      const WscleanOption* wsclean = wsclean_counterpart(row.long_name());
      table.push_back({row.long_name(), row.default_text, row.help, row.binding.values, row.group, range,
                       wsclean ? "-" + wsclean->name() : std::string(),
                       wsclean ? std::string(to_string(wsclean->hook)) : std::string()});
    }
  }
  return table;
}

RunOptions parse_run_options(const std::vector<std::string>& args) {
  const auto cli = parsed(args);
  cli->run.command_line = "gpuclean";
  for (const std::string& a : args) cli->run.command_line += " " + a;
  return cli->run;
}

PartParse parse_part(const std::vector<std::string>& args) {
  auto cli = make_cli();
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    cli->app->parse(reversed);
  } catch (const CLI::RequiresError&) {
    // CLI11 checks the rules between options after every option took its values.
  }
  PartParse part{cli->run, {}};
  for (const OptionRow& row : option_rows())
    if (cli->app->count("--" + row.long_name()) > 0) part.given.push_back(row.long_name());
  return part;
}

}  // namespace gpuclean::app

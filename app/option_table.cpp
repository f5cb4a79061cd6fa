#include "app/option_table.hpp"

#include "app/cli.hpp"

namespace gpuclean::app {

std::vector<OptionInfo> run_option_table() {
  const auto cli = make_cli();
  std::vector<OptionInfo> table;
  for (const CLI::Option* opt : cli->app->get_options()) {
    if (opt->get_positional() || opt->get_lnames().empty()) continue;
    const std::string& name = opt->get_lnames().front();
    if (name == "help" || name == "version") continue;
    table.push_back({name, opt->get_default_str(), opt->get_description(), opt->get_items_expected_max()});
  }
  return table;
}

RunOptions parse_run_options(const std::vector<std::string>& args) {
  const auto cli = make_cli();
  // CLI11 parses a reversed vector of arguments (the program name left out).
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  cli->app->parse(reversed);
  cli->run.command_line = "gpuclean";
  for (const std::string& a : args) cli->run.command_line += " " + a;
  return cli->run;
}

}  // namespace gpuclean::app

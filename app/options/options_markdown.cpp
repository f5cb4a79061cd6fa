#include "app/options/options_markdown.hpp"

#include <sstream>

#include "app/cli.hpp"
#include "app/option_table.hpp"

namespace gpuclean::app {
namespace {

// A table cell: Markdown tables end a cell at '|'.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string wsclean_cell(const OptionInfo& o) {
  if (o.wsclean.empty()) return "";
  return "`" + o.wsclean + "`" + (o.wsclean_reach.empty() ? "" : " (" + o.wsclean_reach + ")");
}

}  // namespace

std::string options_markdown() {
  const auto cli = make_cli();  // for the value names --help shows (UINT, FLOAT, TEXT, ...)
  std::ostringstream md;
  md << "# Options\n\n"
        "<!-- Generated from the option table (app/options/option_rows.cpp) by scripts/options-doc.sh; do not "
        "edit. -->\n\n"
        "The options of `gpuclean DIRTY PSF -o RESTORED [options]`, as `gpuclean --help` lists them. "
        "`gpuclean batch` takes the loop, algorithm, mask, beam, multiscale and cube options as options and as "
        "manifest columns (`gpuclean batch --help`); `gpuclean.deconvolve` takes them all as keywords, dashes as "
        "underscores; the WSClean hook reads them from `GPUCLEAN_OPTIONS`.\n\n"
        "*Values*: the legal values (a range is checked when the run's settings are validated, choices when "
        "the command line is parsed). *WSClean*: WSClean's option of the same meaning and how it reaches the "
        "hook: from WSClean's command line (carried as the gpuclean option unless `GPUCLEAN_OPTIONS` gives it), "
        "through WSClean's `meta` in each call, or from the layout of the arrays WSClean hands over.\n";
  std::string group = "\x01";
  for (const OptionInfo& o : run_option_table()) {
    if (o.group != group) {
      group = o.group;
      md << "\n## " << (group.empty() ? "General" : group) << "\n\n"
         << "| Option | Default | Values | WSClean | Description |\n|---|---|---|---|---|\n";
    }
    const CLI::Option* opt = cli->app->get_option("--" + o.name);
    std::string names = opt->get_snames().empty() ? "" : "-" + opt->get_snames().front() + ", ";
    names += "--" + o.name;
    const std::string type = o.values == 0 ? "" : " " + opt->get_type_name();
    md << "| `" << names << type << "` | " << cell(o.default_value) << " | " << cell(o.range) << " | "
       << wsclean_cell(o) << " | " << cell(o.description) << " |\n";
  }
  return md.str();
}

}  // namespace gpuclean::app

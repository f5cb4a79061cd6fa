#pragma once
// The single command's options as plain data, and its parser as a function: for front ends other
// than the command line (the Python package, the WSClean hook, docs/options.md), so that they take
// the same names, defaults, checks and messages without a copy of any of them. Read from the
// option rows (app/options/option_row.hpp); no CLI11 types cross this header.

#include <string>
#include <vector>

#include "app/run_options.hpp"

namespace gpuclean::app {

/// One option of the single command (`gpuclean DIRTY PSF -o RESTORED [options]`).
struct OptionInfo {
  std::string name;           ///< the long name without dashes: "niter", "beam-shape", "output"
  std::string default_value;  ///< as --help shows it; empty when there is none
  std::string description;
  int values = 1;             ///< values it takes: 0 for a flag, 3 for --beam-shape, -1 for a list
  std::string group;          ///< --help's heading ("Loop control"); empty: the ungrouped options
  std::string range;          ///< legal values: "(0, 1]", ">= 0", or the choices "clark, hogbom"; empty: any
  std::string wsclean;        ///< WSClean's option of the same meaning ("-multiscale-gain"), or empty
  /// How WSClean's option reaches the hook: "command line" (carried as this option), "meta" (WSClean
  /// passes the value in each call), "layout" (the arrays' channels and polarizations); empty: none.
  std::string wsclean_reach;
};

/// Every option of the single command, in --help order within each group (--help and --version
/// left out).
std::vector<OptionInfo> run_option_table();

/// Parses `args` (e.g. {"in.fits", "psf.fits", "--niter", "100"}) exactly as the command line
/// does; command_line is "gpuclean" and the arguments, for HISTORY. Throws CLI11's ParseError (a usage error, app::classify) with the command line's message.
RunOptions parse_run_options(const std::vector<std::string>& args);

/// Part of a command line (GPUCLEAN_OPTIONS, before WSClean's options join it) parsed as the
/// command line does, less the rules between options (--multiscale-gain needs --multiscale), which
/// the whole line must meet: the options it sets and the long names (without dashes) it gives, as
/// the parser counted them ("--gain=0.2" and "--gain 0.2" alike). Throws as parse_run_options.
struct PartParse {
  RunOptions options;
  std::vector<std::string> given;
};
PartParse parse_part(const std::vector<std::string>& args);

}  // namespace gpuclean::app

#pragma once
// The single command's options as data, and its parser as a function: for front ends other than
// the command line (the Python package), so that they take the same names, defaults, checks and
// messages without a copy of any of them. No CLI11 types cross this header.

#include <string>
#include <vector>

#include "app/run_options.hpp"

namespace gpuclean::app {

/// One option of the single command (`gpuclean DIRTY PSF -o RESTORED [options]`).
struct OptionInfo {
  std::string name;           ///< the long name without dashes: "niter", "beam-shape", "output"
  std::string default_value;  ///< as --help shows it; empty when there is none
  std::string description;
  int values = 1;             ///< values it takes: 0 for a flag, 3 for --beam-shape
};

/// Every option of the single command, in --help order (--help and --version left out).
std::vector<OptionInfo> run_option_table();

/// Parses `args` (e.g. {"in.fits", "psf.fits", "--niter", "100"}) exactly as the command line
/// does; command_line is "gpuclean" and the arguments, for HISTORY. Throws CLI11's ParseError (a usage error, app::classify) with the command line's message.
RunOptions parse_run_options(const std::vector<std::string>& args);

}  // namespace gpuclean::app

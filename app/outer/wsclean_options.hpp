#pragma once
// The WSClean hook's settings, decided once in C++: GPUCLEAN_OPTIONS split and parsed by the
// single command's parser, WSClean's own deconvolution options carried through the option
// table's WSClean names, and what WSClean's meta and arrays give (the gain, the joins, the
// theoretical beam, its version). "Given" is what the parser counted, never a text search.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/outer/outer_loop_run.hpp"
#include "app/wsclean/wsclean_option.hpp"

namespace gpuclean::app {

/// Splits `text` into words as a POSIX shell does (blanks separate; '...' literal; "..." with \"
/// \\ \$ \` escaped; a backslash outside quotes escapes the next character), without expanding
/// anything. Throws clean::InvalidSettings for an unclosed quote.
std::vector<std::string> split_words(const std::string& text);

/// WSClean's command line `wsclean_args` (argv, [0] the program) read by the WSClean option table
/// (app/wsclean/wsclean_option.hpp), leniently: WSClean took it already.
ReadCommandLine read_wsclean_command(const std::vector<std::string>& wsclean_args);

/// gpuclean's options for the deconvolution options WSClean's command line gives: the table's
/// rows the hook carries (HookUse::kCarried), each with WSClean's last value, and the flags they
/// imply (-local-rms-window: --local-rms); those that `gpuclean_args` (GPUCLEAN_OPTIONS) gives are
/// left out. -no-negative counts when no -negative follows it. Throws the parser's error for
/// `gpuclean_args`.
std::vector<std::string> carried_options(const std::vector<std::string>& wsclean_args,
                                         const std::vector<std::string>& gpuclean_args);

/// The hook's refusal of WSClean's command line, one line (the first option it cannot honour),
/// or empty.
std::string hook_refusal(const std::vector<std::string>& wsclean_args);

/// WSClean's options given that mean nothing for gpuclean (speed switches of its own CLEAN).
std::vector<std::string> hook_ignored(const std::vector<std::string>& wsclean_args);

struct WscleanSessionRequest {
  std::string gpuclean_options;           ///< GPUCLEAN_OPTIONS' text
  std::vector<std::string> wsclean_args;  ///< WSClean's command line (argv)
  std::size_t channels = 1;               ///< channels WSClean hands over at once (joined above 1)
  std::size_t polarizations = 1;          ///< polarizations it hands over at once
  /// meta.gain, which gpuclean takes unless GPUCLEAN_OPTIONS gives --gain. Without it (the check
  /// before WSClean's first call) only what the command lines ask is parsed and validated: no
  /// gain, no stopping-rule default, no beam and no version rule.
  std::optional<double> gain;
  std::optional<std::pair<int, int>> version;  ///< WSClean's (major, minor), when known
  std::vector<std::string> ignored;            ///< WSClean's options that mean nothing for gpuclean
  /// WSClean's theoretical beam in pixels, or (nullopt, why not); asked only when --multiscale or
  /// --local-rms needs a beam that GPUCLEAN_OPTIONS does not give.
  std::function<std::pair<std::optional<double>, std::string>()> theoretical_beam;
};

struct WscleanSessionSettings {
  OuterLoopOptions options;        ///< parsed and validated
  std::vector<std::string> args;   ///< the options as the parser took them
  std::vector<std::string> notes;  ///< for the first major cycle's line
  std::optional<std::size_t> niter;  ///< gpuclean's own --niter, when GPUCLEAN_OPTIONS gives it
  bool fit_given = false;          ///< GPUCLEAN_OPTIONS gives the spectral fit itself
  bool wsclean_auto_mask = false;  ///< WSClean's own -auto-mask is on its command line
};

/// The session's settings (see WscleanSessionRequest). Throws CLI11's ParseError or
/// clean::InvalidSettings with the message to show.
WscleanSessionSettings wsclean_session_settings(const WscleanSessionRequest& request);

/// Whether GPUCLEAN_OPTIONS' text asks for the CPU (--device cpu): the hook then starts no GPU
/// warm-up. False when the text does not parse (the session reports that).
bool device_is_cpu(const std::string& gpuclean_options);

}  // namespace gpuclean::app

#pragma once
// WSClean's command line as data: one row for each option WSClean 3.7's parser takes, and for the
// names WSClean 3.1 (Debian's) took that 3.7 dropped, with WSClean's meaning and what gpuclean
// does with it. `gpuclean image`'s parser and -help, docs/imaging.md's table, the single command's
// WSClean column (docs/options.md) and the WSClean hook's reading of WSClean's command line all
// come from these rows: there is no other list of WSClean's words.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclean::app {

struct ImageOptions;

/// What `gpuclean image` does with an option.
enum class ImageUse {
  kYes,      ///< WSClean's meaning, implemented
  kMapped,   ///< WSClean's meaning reached gpuclean's own way; a note says how when the run starts
  kRefused,  ///< gpuclean cannot do it: refused before any work (exit 2) with the reason
  kNotYet,   ///< planned (polarimetry, primary beam): refused before any work (exit 2) with the reason
};
std::string_view to_string(ImageUse use);

/// How the WSClean hook (gpuclean as WSClean's -python-deconvolution) treats an option of the
/// WSClean command line it runs in.
enum class HookUse {
  kImager,     ///< WSClean's own imaging, I/O and resources: not the deconvolver's business
  kCarried,    ///< read from WSClean's command line into the single command's option `carries`
  kMeta,       ///< WSClean passes it (or what it makes of it) in each call's meta
  kLayout,     ///< follows from the arrays WSClean hands over (channels, polarizations)
  kNoMeaning,  ///< a speed switch of WSClean's own CLEAN, meaningless for gpuclean's
  kRefused,    ///< cannot be honoured through the hook (hook_why)
};
std::string_view to_string(HookUse use);

/// One option as given: the name as written ("-niter", "--niter") and its values.
struct GivenOption {
  std::string option;
  std::vector<std::string> values;
};

using ImageApply = std::function<void(ImageOptions&, const GivenOption&)>;

/// -weight takes one word, or two for "briggs R".
inline constexpr int kWeightValues = -1;

struct WscleanOption {
  /// names[0] is WSClean 3.7's; the others are aliases (3.7's deprecated names, 3.1's dropped ones).
  std::vector<std::string> names;
  int values = 0;        ///< words taken after the option (kWeightValues: -weight's rule)
  std::string metavar;   ///< -help's words for the values ("<fraction>")
  std::string section;   ///< WSClean's -help heading
  std::string meaning;   ///< WSClean's meaning, one sentence
  ImageUse image = ImageUse::kYes;
  /// kYes: a remark for the docs (may be empty); kMapped: how gpuclean reaches the meaning;
  /// kRefused and kNotYet: why (the refusal's text).
  std::string gpuclean;
  ImageApply apply;      ///< kYes and kMapped: sets the options from the values (and checks them)
  HookUse hook = HookUse::kImager;
  std::string carries;   ///< kCarried, kMeta, kLayout: the single command's long option name
  std::vector<std::string> implies;  ///< kCarried: flags carried along (-local-rms-window: local-rms)
  bool negates = false;  ///< kCarried: undoes `carries` (-negative undoes -no-negative)
  std::string hook_why;  ///< kRefused
  bool own = false;      ///< gpuclean's own option (-device, -max-gpus, -json): WSClean has none such

  const std::string& name() const { return names.front(); }
  /// "-name" and, for options with values, "-name <metavar>".
  std::string usage() const;
};

/// Every row, grouped by WSClean's -help sections.
const std::vector<WscleanOption>& wsclean_options();

/// The row taking `name` (without dashes; any of its names), or nullptr.
const WscleanOption* find_wsclean_option(std::string_view name);

/// The row whose hook column names the single command's option `long_name` (kCarried, kMeta or
/// kLayout, not negating), or nullptr: the single command's WSClean counterpart.
const WscleanOption* wsclean_counterpart(std::string_view long_name);

/// One option read from a command line: its row and how it was given.
struct ReadOption {
  const WscleanOption* row = nullptr;  ///< nullptr: not one of WSClean's (lenient reads only)
  GivenOption given;
};

struct ReadCommandLine {
  std::vector<ReadOption> options;  ///< in command-line order
  std::vector<std::string> others;  ///< words that are no option's (the MeasurementSets)
};

/// Reads `args` as WSClean does: "-name" or "--name", each option followed by its values (a value
/// may start with a dash: "-weight briggs -0.5"). Strict: an unknown option or a missing value
/// throws clean::InvalidSettings with one line. Lenient (the hook, reading the command line WSClean
/// already took): an unknown word is kept without a row and no value.
ReadCommandLine read_wsclean_command_line(const std::vector<std::string>& args, bool strict);

/// WSClean's options from the table, as `gpuclean image -help` lists them.
std::string wsclean_options_usage();

/// docs/imaging.md's table of every WSClean option with gpuclean's support.
std::string wsclean_options_markdown();

}  // namespace gpuclean::app

#pragma once
// One option of the single command as data: its names, group, help, default, legal values and
// the RunOptions member it sets. The command line (make_cli), batch's manifest columns, the Python
// keywords, the WSClean hook and docs/options.md are all made from these rows
// (app/options/option_rows.cpp), so none of them keeps its own copy. WSClean's counterpart of an
// option is the WSClean option table's (app/wsclean/wsclean_option.hpp wsclean_counterpart).

#include <CLI/CLI.hpp>

#include <functional>
#include <type_traits>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "app/enum_option.hpp"
#include "app/run_options.hpp"

namespace gpuclean::app {

/// Which front ends take a row: the single command takes all; batch (and a manifest's columns)
/// the observation and cube rows; a manifest the output files too.
enum class OptionSection { kOutput, kObservation, kOutputFile, kCubeInput, kCube };

/// The legal values of a number: the interval clean::validate (or, for counts, the command line)
/// enforces, as data for the docs, the Python keywords and the table's tests.
struct Range {
  std::optional<double> low, high;
  bool low_open = false, high_open = false;
  std::string text() const;  ///< "(0, 1]", ">= 0", "[0, 50)"; empty for none
};

/// How a row reaches its RunOptions member: what the parser adds, and how many values it takes.
struct Binding {
  using Add = std::function<CLI::Option*(CLI::App&, RunOptions&, const std::string& name, const std::string& help)>;
  Add add;
  int values = 1;                    ///< 0: a flag; N: N values; -1: a list (commas or several values)
  std::vector<std::string> choices;  ///< the names a choice takes (checked by CLI11's IsMember)
};

struct OptionRow {
  std::string names;         ///< CLI11's name list: "--niter", "-q,--quiet"
  OptionSection section = OptionSection::kObservation;
  std::string group;         ///< --help's heading; empty: the ungrouped "Options"
  std::string help;
  std::string default_text;  ///< as --help shows it (tests: the member's own default); empty: none
  Range range;               ///< numbers: the legal interval; choices come from the binding
  Binding binding;
  std::string needs;         ///< an option this one needs ("--multiscale")
  char delimiter = '\0';     ///< a list's separator
  std::string type_name;     ///< CLI11's value names ("LOW HIGH") where the type's would mislead

  OptionRow(std::string names_, OptionSection section_, std::string group_, std::string help_,
            std::string default_text_, Range range_, Binding binding_,
            std::string needs_ = {}, char delimiter_ = '\0', std::string type_name_ = {})
      : names(std::move(names_)), section(section_), group(std::move(group_)), help(std::move(help_)),
        default_text(std::move(default_text_)), range(range_), binding(std::move(binding_)), needs(std::move(needs_)), delimiter(delimiter_), type_name(std::move(type_name_)) {}

  std::string long_name() const;  ///< without dashes: "quiet"
};

/// Every option of the single command, in the order --help lists them within each group.
const std::vector<OptionRow>& option_rows();
/// The row of a long name ("niter"), or nullptr.
const OptionRow* find_option_row(const std::string& long_name);

/// Adds the rows of `section` to `app`, writing into `r`. Defaults show the member's current value
/// (batch starts --parallel-planes at 1), which the table's tests check against default_text.
void add_option_rows(CLI::App& app, RunOptions& r, OptionSection section);

namespace bind {

/// A typed member: `get` maps the RunOptions to it.
template <class Get>
Binding value(Get get) {
  using T = std::decay_t<decltype(get(std::declval<RunOptions&>()))>;
  Binding b;
  b.values = CLI::detail::is_mutable_container<T>::value && !std::is_same_v<T, std::string> ? -1 : 1;
  b.add = [get](CLI::App& app, RunOptions& r, const std::string& name, const std::string& help) {
    return app.add_option(name, get(r), help);
  };
  return b;
}

/// A bool member that the flag sets.
template <class Get>
Binding flag(Get get) {
  Binding b;
  b.values = 0;
  b.add = [get](CLI::App& app, RunOptions& r, const std::string& name, const std::string& help) {
    return app.add_flag(name, get(r), help);
  };
  return b;
}

/// A flag that does what `set` does to the options.
inline Binding flag_call(std::function<void(RunOptions&)> set) {
  Binding b;
  b.values = 0;
  b.add = [set](CLI::App& app, RunOptions& r, const std::string& name, const std::string& help) {
    return app.add_flag(name, [&r, set](std::int64_t) { set(r); }, help);
  };
  return b;
}

/// A settings enum, by the names of its table (clean/enum_names.hpp).
template <class Get, class E, std::size_t N>
Binding choice(Get get, const std::array<clean::EnumName<E>, N>& table) {
  Binding b;
  b.choices = clean::names_of(table);
  b.add = [get, &table](CLI::App& app, RunOptions& r, const std::string& name, const std::string& help) {
    return add_enum_option(app, name, get(r), table, help);
  };
  return b;
}

/// `count` numbers at once, handed to `set` (--beam-shape BMAJ BMIN BPA).
inline Binding numbers(int count, std::function<void(RunOptions&, const std::vector<double>&)> set) {
  Binding b;
  b.values = count;
  b.add = [count, set](CLI::App& app, RunOptions& r, const std::string& name, const std::string& help) {
    return app.add_option_function<std::vector<double>>(
                  name, [&r, set](const std::vector<double>& v) { set(r, v); }, help)
        ->expected(count);
  };
  return b;
}

/// One of `choices` as text, handed to `set`; `current` names the member's value (--help's default).
inline Binding text_choice(std::vector<std::string> choices, std::function<void(RunOptions&, const std::string&)> set,
                           std::function<std::string(const RunOptions&)> current) {
  Binding b;
  b.choices = choices;
  b.add = [choices, set, current](CLI::App& app, RunOptions& r, const std::string& name, const std::string& help) {
    return app.add_option_function<std::string>(name, [&r, set](const std::string& v) { set(r, v); }, help)
        ->check(CLI::IsMember(choices))
        ->default_str(current(r));
  };
  return b;
}

}  // namespace bind
}  // namespace gpuclean::app

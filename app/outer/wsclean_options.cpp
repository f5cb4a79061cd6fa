#include "app/outer/wsclean_options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <optional>

#include "app/option_table.hpp"
#include "app/options/option_row.hpp"
#include "app/wsclean/wsclean_option.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// A number as Python's repr() writes it: the shortest text that reads back to the same double.
std::string shortest(double v) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}

std::string fixed3(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", v);
  return buffer;
}

// WSClean counts multiscale's automatic scales and -local-rms-window in its theoretical beam, not
// in the fitted PSF: the beam options gpuclean needs for that, unless given.
std::vector<std::string> beam_options(const std::vector<std::string>& given, const WscleanSessionRequest& request,
                                      std::vector<std::string>& notes) {
  struct Wanted {
    const char* option;
    const char* on;
    const char* what;
  };
  const Wanted all[] = {{"multiscale-beam", "multiscale", "scales"},
                        {"local-rms-beam", "local-rms", "the local-RMS window"}};
  std::vector<const Wanted*> wanted;
  for (const Wanted& w : all)
    if (contains(given, w.on) && !contains(given, w.option)) wanted.push_back(&w);
  if (wanted.empty() || !request.theoretical_beam) return {};
  std::string what, options;
  for (const Wanted* w : wanted) {
    what += (what.empty() ? "" : " and ") + std::string(w->what);
    options += (options.empty() ? "--" : " --") + std::string(w->option);
  }
  const auto [beam, why_not] = request.theoretical_beam();
  if (!beam || *beam == 0.0) {
    notes.push_back(what + " in the PSF's fitted beam, not WSClean's theoretical beam (" + why_not + "; give " +
                    options + ")");
    return {};
  }
  notes.push_back(what + " in WSClean's theoretical beam of " + fixed3(*beam) + " pixels");
  std::vector<std::string> args;
  for (const Wanted* w : wanted) args.insert(args.end(), {"--" + std::string(w->option), shortest(*beam)});
  return args;
}

}  // namespace

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word)), word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 < text.size()) word += text[++i];
    } else if (c == '\'') {
      const std::size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) throw clean::InvalidSettings("GPUCLEAN_OPTIONS has an unclosed ' quote: " + text);
      word += text.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size() && std::string("\"\\$`\n").find(text[j + 1]) != std::string::npos)
          ++j;
        word += text[j];
      }
      if (j >= text.size()) throw clean::InvalidSettings("GPUCLEAN_OPTIONS has an unclosed \" quote: " + text);
      i = j;
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::vector<std::string> carried_options(const std::vector<std::string>& wsclean_args,
                                         const std::vector<std::string>& gpuclean_args) {
  const std::vector<std::string> given = parse_part(gpuclean_args).given;
  // The long names WSClean's command line carries, each with its last value (WSClean's last option
  // wins; -negative undoes -no-negative); nullopt: undone.
  std::map<std::string, std::optional<std::vector<std::string>>> carried;
  for (const ReadOption& read : read_wsclean_command(wsclean_args).options) {
    if (!read.row || read.row->hook != HookUse::kCarried) continue;
    if (read.row->negates) {
      carried[read.row->carries] = std::nullopt;
      continue;
    }
    carried[read.row->carries] = read.given.values;
    for (const std::string& flag : read.row->implies) carried[flag] = std::vector<std::string>{};
  }
  std::vector<std::string> args;
  for (const OptionRow& row : option_rows()) {  // in the single command's order
    const auto it = carried.find(row.long_name());
    if (it == carried.end() || !it->second || contains(given, row.long_name())) continue;
    args.push_back("--" + row.long_name());
    args.insert(args.end(), it->second->begin(), it->second->end());
  }
  return args;
}

ReadCommandLine read_wsclean_command(const std::vector<std::string>& wsclean_args) {
  if (wsclean_args.empty()) return {};
  return read_wsclean_command_line({wsclean_args.begin() + 1, wsclean_args.end()}, false);
}

std::string hook_refusal(const std::vector<std::string>& wsclean_args) {
  for (const ReadOption& read : read_wsclean_command(wsclean_args).options) {
    if (!read.row) continue;
    if (read.row->hook == HookUse::kRefused)
      return "WSClean's -" + read.row->name() + " cannot be honoured through gpuclean's hook (" + read.row->hook_why +
             "); leave it out.";
    if (read.row->name() == "local-rms-method" && read.given.values.at(0) != "rms")
      return "WSClean's -local-rms-method " + read.given.values.at(0) +
             " cannot be honoured through gpuclean's hook (it has WSClean's 'rms' map and its own 'mad'); use rms.";
  }
  return {};
}

std::vector<std::string> hook_ignored(const std::vector<std::string>& wsclean_args) {
  std::vector<std::string> names;
  for (const ReadOption& read : read_wsclean_command(wsclean_args).options)
    if (read.row && read.row->hook == HookUse::kNoMeaning &&
        std::find(names.begin(), names.end(), "-" + read.row->name()) == names.end())
      names.push_back("-" + read.row->name());
  return names;
}

WscleanSessionSettings wsclean_session_settings(const WscleanSessionRequest& request) {
  const std::vector<std::string> tokens = split_words(request.gpuclean_options);
  const std::vector<std::string> own = parse_part(tokens).given;  // what GPUCLEAN_OPTIONS gives
  WscleanSessionSettings out;
  std::vector<std::string>& args = out.args;
  args = tokens;
  const std::vector<std::string> carried = carried_options(request.wsclean_args, tokens);
  args.insert(args.end(), carried.begin(), carried.end());
  // The joins follow from what WSClean hands over at once.
  std::vector<std::string> given = parse_part(args).given;
  if (request.channels > 1 && !contains(given, "join-channels")) args.push_back("--join-channels");
  if (request.polarizations > 1 && !contains(given, "join-polarizations")) args.push_back("--join-polarizations");
  if (request.gain) {
    if (!contains(own, "gain")) args.insert(args.end(), {"--gain", shortest(*request.gain)});
    // WSClean's final threshold (in meta) is the stopping rule.
    if (!contains(own, "auto-threshold") && !contains(own, "threshold")) args.insert(args.end(), {"--auto-threshold", "0"});
    if (request.version)
      out.notes.push_back("WSClean " + std::to_string(request.version->first) + "." +
                          std::to_string(request.version->second));
    if (!request.ignored.empty()) {
      std::string names;
      for (const std::string& n : request.ignored) names += (names.empty() ? "" : ", ") + n;
      out.notes.push_back(names + " mean nothing for gpuclean");
    }
    given = parse_part(args).given;
    const std::vector<std::string> beam = beam_options(given, request, out.notes);
    args.insert(args.end(), beam.begin(), beam.end());
    if (request.version && *request.version >= std::make_pair(3, 3) && contains(given, "local-rms") &&
        !contains(given, "local-rms-periodic")) {
      args.push_back("--local-rms-periodic");  // radler's map: a circular convolution
      out.notes.push_back("the local-RMS window periodic as radler's");
    }
  }
  out.options = parse_outer_loop_options(args);
  if (contains(own, "niter")) out.niter = out.options.settings.niter;
  out.fit_given = contains(own, "fit-spectral-pol") || contains(own, "fit-spectral-log-pol");
  for (const ReadOption& read : read_wsclean_command(request.wsclean_args).options)
    if (read.row && read.row->name() == "auto-mask") out.wsclean_auto_mask = true;
  return out;
}

bool device_is_cpu(const std::string& gpuclean_options) {
  try {
    return parse_part(split_words(gpuclean_options)).options.settings.device == clean::Device::kCpu;
  } catch (...) {  // the session reports what does not parse
    return false;
  }
}

}  // namespace gpuclean::app

// The option table as text: `gpuclean image -help` and docs/imaging.md's table.
#include <sstream>

#include "app/wsclean/wsclean_option.hpp"

namespace gpuclean::app {
namespace {

std::string aliases(const WscleanOption& row) {
  std::string out;
  for (std::size_t i = 1; i < row.names.size(); ++i) out += (out.empty() ? "" : ", ") + ("-" + row.names[i]);
  return out;
}

std::string support_text(const WscleanOption& row) {
  if (row.own) return "gpuclean's own";
  return std::string(to_string(row.image));
}

// A Markdown cell: pipes escaped, no line breaks.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace

std::string wsclean_options_usage() {
  std::ostringstream s;
  std::string section;
  for (const WscleanOption& row : wsclean_options()) {
    if (row.section != section) s << "\n" << (section = row.section) << "\n";
    s << "  " << row.usage();
    if (row.names.size() > 1) s << " (also " << aliases(row) << ")";
    s << "  " << row.meaning;
    if (row.image != ImageUse::kYes || !row.gpuclean.empty())
      s << "  [" << (row.image == ImageUse::kYes ? "gpuclean" : std::string(to_string(row.image))) << ": "
        << row.gpuclean << "]";
    s << "\n";
  }
  return s.str();
}

std::string wsclean_options_markdown() {
  std::ostringstream s;
  s << "| option | WSClean's meaning | gpuclean image | what gpuclean does | the WSClean hook |\n"
       "| --- | --- | --- | --- | --- |\n";
  for (const WscleanOption& row : wsclean_options()) {
    std::string names = "`" + row.usage() + "`";
    if (row.names.size() > 1) names += " (also " + aliases(row) + ")";
    std::string hook = std::string(to_string(row.hook));
    if (row.hook == HookUse::kCarried || row.hook == HookUse::kMeta || row.hook == HookUse::kLayout)
      hook += ": `--" + row.carries + "`" + (row.negates ? " undone" : "");
    if (row.hook == HookUse::kRefused) hook += ": " + row.hook_why;
    s << "| " << cell(names) << " | " << cell(row.meaning) << " | " << support_text(row) << " | " << cell(row.gpuclean)
      << " | " << cell(hook) << " |\n";
  }
  return s.str();
}

}  // namespace gpuclean::app

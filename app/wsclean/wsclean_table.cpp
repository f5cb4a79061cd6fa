#include <map>
#include <set>
#include <stdexcept>

#include "app/wsclean/wsclean_option.hpp"
#include "app/wsclean/wsclean_rows.hpp"
#include "clean/errors.hpp"

namespace gpuclean::app {
namespace wsclean_rows {
namespace {

WscleanOption make(const std::string& names, int values, std::string metavar, std::string meaning, ImageUse use,
                   std::string gpuclean, ImageApply apply) {
  WscleanOption row;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = names.find(',', start);
    row.names.push_back(names.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  row.values = values;
  row.metavar = std::move(metavar);
  row.meaning = std::move(meaning);
  row.image = use;
  row.gpuclean = std::move(gpuclean);
  row.apply = std::move(apply);
  return row;
}

std::string joined(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += " " + v;
  return out;
}

}  // namespace

WscleanOption yes(const std::string& names, int values, std::string metavar, std::string meaning, ImageApply apply,
                  std::string remark) {
  return make(names, values, std::move(metavar), std::move(meaning), ImageUse::kYes, std::move(remark), std::move(apply));
}

WscleanOption mapped(const std::string& names, int values, std::string metavar, std::string meaning, std::string how,
                     ImageApply apply) {
  if (!apply) apply = [how](ImageOptions& o, const GivenOption& g) { note(o, g, how); };
  return make(names, values, std::move(metavar), std::move(meaning), ImageUse::kMapped, std::move(how), std::move(apply));
}

WscleanOption refused(const std::string& names, int values, std::string metavar, std::string meaning, std::string why) {
  return make(names, values, std::move(metavar), std::move(meaning), ImageUse::kRefused, std::move(why), {});
}

WscleanOption not_yet(const std::string& names, int values, std::string metavar, std::string meaning, std::string why) {
  return make(names, values, std::move(metavar), std::move(meaning), ImageUse::kNotYet, std::move(why), {});
}

WscleanOption carried(WscleanOption row, std::string long_name, std::vector<std::string> implies) {
  row.hook = HookUse::kCarried;
  row.carries = std::move(long_name);
  row.implies = std::move(implies);
  return row;
}

WscleanOption negating(WscleanOption row, std::string long_name) {
  row = carried(std::move(row), std::move(long_name));
  row.negates = true;
  return row;
}

WscleanOption meta(WscleanOption row, std::string long_name) {
  row.hook = HookUse::kMeta;
  row.carries = std::move(long_name);
  return row;
}

WscleanOption layout(WscleanOption row, std::string long_name) {
  row.hook = HookUse::kLayout;
  row.carries = std::move(long_name);
  return row;
}

WscleanOption no_meaning(WscleanOption row) {
  row.hook = HookUse::kNoMeaning;
  return row;
}

WscleanOption hook_refused(WscleanOption row, std::string why) {
  row.hook = HookUse::kRefused;
  row.hook_why = std::move(why);
  return row;
}

void add(std::vector<WscleanOption>& rows, const std::string& section, std::vector<WscleanOption> list) {
  for (WscleanOption& row : list) {
    row.section = section;
    rows.push_back(std::move(row));
  }
}

void note(ImageOptions& o, const GivenOption& g, const std::string& text) {
  o.notes.push_back(g.option + joined(g.values) + ": " + text);
}

}  // namespace wsclean_rows

std::string_view to_string(ImageUse use) {
  switch (use) {
    case ImageUse::kYes: return "yes";
    case ImageUse::kMapped: return "mapped";
    case ImageUse::kRefused: return "refused";
    case ImageUse::kNotYet: return "not yet";
  }
  return "?";
}

std::string_view to_string(HookUse use) {
  switch (use) {
    case HookUse::kImager: return "imager";
    case HookUse::kCarried: return "command line";
    case HookUse::kMeta: return "meta";
    case HookUse::kLayout: return "layout";
    case HookUse::kNoMeaning: return "no meaning";
    case HookUse::kRefused: return "refused";
  }
  return "?";
}

std::string WscleanOption::usage() const { return "-" + name() + (metavar.empty() ? "" : " " + metavar); }

const std::vector<WscleanOption>& wsclean_options() {
  static const std::vector<WscleanOption> rows = [] {
    std::vector<WscleanOption> all;
    wsclean_rows::general_rows(all);
    wsclean_rows::inversion_rows(all);
    wsclean_rows::selection_rows(all);
    wsclean_rows::deconvolution_rows(all);
    wsclean_rows::restore_rows(all);
    wsclean_rows::beam_rows(all);
    wsclean_rows::own_rows(all);
    std::set<std::string> seen;
    for (const WscleanOption& row : all) {
      for (const std::string& n : row.names)
        if (!seen.insert(n).second) throw std::logic_error("WSClean option table: -" + n + " twice");
      const bool applies = row.image == ImageUse::kYes || row.image == ImageUse::kMapped;
      if (applies != static_cast<bool>(row.apply) || row.section.empty())
        throw std::logic_error("WSClean option table: -" + row.name() + " is incomplete");
    }
    return all;
  }();
  return rows;
}

const WscleanOption* find_wsclean_option(std::string_view name) {
  static const std::map<std::string, const WscleanOption*, std::less<>> by_name = [] {
    std::map<std::string, const WscleanOption*, std::less<>> m;
    for (const WscleanOption& row : wsclean_options())
      for (const std::string& n : row.names) m[n] = &row;
    return m;
  }();
  const auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

const WscleanOption* wsclean_counterpart(std::string_view long_name) {
  for (const WscleanOption& row : wsclean_options())
    if (row.carries == long_name && !row.negates &&
        (row.hook == HookUse::kCarried || row.hook == HookUse::kMeta || row.hook == HookUse::kLayout))
      return &row;
  return nullptr;
}

ReadCommandLine read_wsclean_command_line(const std::vector<std::string>& args, bool strict) {
  ReadCommandLine out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word.size() < 2 || word[0] != '-') {
      out.others.push_back(word);
      continue;
    }
    const std::string name = word.substr(word[1] == '-' ? 2 : 1);
    const WscleanOption* row = find_wsclean_option(name);
    if (!row) {
      if (strict)
        throw clean::InvalidSettings("unknown option " + word + ": WSClean has no such option (gpuclean image -help "
                                     "lists WSClean's options and gpuclean's own)");
      out.options.push_back({nullptr, {word, {}}});
      continue;
    }
    std::size_t values = static_cast<std::size_t>(row->values);
    if (row->values == kWeightValues) values = i + 1 < args.size() && args[i + 1] == "briggs" ? 2 : 1;
    if (i + values >= args.size()) {
      if (!strict) break;  // WSClean took its own command line: nothing follows
      throw clean::InvalidSettings(word + " needs " + std::to_string(values) + " value" + (values == 1 ? "" : "s") +
                                   (row->metavar.empty() ? "" : " (" + row->metavar + ")"));
    }
    ReadOption read{row, {word, {}}};
    read.given.values.assign(args.begin() + static_cast<std::ptrdiff_t>(i + 1),
                             args.begin() + static_cast<std::ptrdiff_t>(i + 1 + values));
    out.options.push_back(std::move(read));
    i += values;
  }
  return out;
}

}  // namespace gpuclean::app

#include "app/wsclean/wsclean_values.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "clean/errors.hpp"

namespace gpuclean::app::wsclean_value {
namespace {

using clean::InvalidSettings;

std::string shortest(double v) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
}

std::string quoted(const GivenOption& g, std::size_t i) { return g.option + " '" + g.values.at(i) + "'"; }

double parse_number(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) throw InvalidSettings(what + " is not a number");
  return v;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

}  // namespace

double number(const GivenOption& g, std::size_t i) { return parse_number(g.values.at(i), quoted(g, i)); }

std::size_t count(const GivenOption& g, std::size_t min, std::size_t i) {
  const std::string& text = g.values.at(i);
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') throw InvalidSettings(quoted(g, i) + " is not a whole number");
  if (v < static_cast<long long>(min))
    throw InvalidSettings(g.option + " " + text + " must be at least " + std::to_string(min));
  return static_cast<std::size_t>(v);
}

double fraction(const GivenOption& g, std::size_t i) {
  const double v = number(g, i);
  if (!(v > 0 && v <= 1)) throw InvalidSettings(g.option + " " + g.values.at(i) + " must be in (0, 1]");
  return v;
}

double at_least(const GivenOption& g, double min, bool open, std::size_t i) {
  const double v = number(g, i);
  if (open ? !(v > min) : !(v >= min))
    throw InvalidSettings(g.option + " " + g.values.at(i) + " must be " + (open ? "above " : "at least ") + shortest(min));
  return v;
}

std::vector<double> numbers(const GivenOption& g, std::size_t i) {
  std::vector<double> out;
  for (const std::string& item : split_commas(g.values.at(i)))
    out.push_back(parse_number(item, g.option + " '" + g.values.at(i) + "': '" + item + "'"));
  return out;
}

std::vector<std::size_t> counts(const GivenOption& g, std::size_t i) {
  std::vector<std::size_t> out;
  for (const std::string& item : split_commas(g.values.at(i))) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0)
      throw InvalidSettings(g.option + " '" + g.values.at(i) + "': '" + item + "' is not a whole number of at least 0");
    out.push_back(static_cast<std::size_t>(v));
  }
  return out;
}

std::string choice(const GivenOption& g, const std::vector<std::string>& choices, std::size_t i) {
  for (const std::string& c : choices)
    if (g.values.at(i) == c) return c;
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  throw InvalidSettings(quoted(g, i) + " is not one of " + list);
}

double flux_density(const std::string& text, const std::string& option) {
  // aocommon's FindNumberEnd: blanks, sign, digits, point, digits, exponent; then blanks and a unit.
  std::size_t end = 0;
  auto digits = [&] {
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  };
  while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
  const std::size_t start = end;
  if (end < text.size() && text[end] == '-') ++end;
  digits();
  if (end < text.size() && text[end] == '.') ++end;
  digits();
  if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    ++end;
    if (end < text.size() && (text[end] == '-' || text[end] == '+')) ++end;
    digits();
  }
  char* number_end = nullptr;
  const std::string number_text = text.substr(start, end - start);
  const double v = std::strtod(number_text.c_str(), &number_end);
  if (number_text.empty() || *number_end != '\0' || !std::isfinite(v))
    throw InvalidSettings(option + " '" + text + "' is not a flux density (e.g. 0.01, 10mJy)");
  while (end < text.size() && (text[end] == ' ' || text[end] == '\t')) ++end;
  const std::string unit = text.substr(end);
  std::string lower = unit;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.empty() || lower == "jy" || lower == "jansky") return v;
  if (unit == "mJy" || unit == "mjy" || lower == "millijansky") return v * 1e-3;
  if (unit == "KJy" || unit == "kjy" || lower == "kilojansky") return v * 1e3;
  if (unit == "µJy" || unit == "µjy" || lower == "microjansky") return v * 1e-6;
  if (unit == "nJy" || unit == "njy" || lower == "nanojansky") return v * 1e-9;
  throw InvalidSettings(option + " '" + text + "': unknown unit '" + unit + "' (Jy, mJy, µJy, nJy or KJy)");
}

}  // namespace gpuclean::app::wsclean_value

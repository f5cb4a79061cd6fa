#include "io/fits_header.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace gpuclean::io {
namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(' ');
  return std::string(s.substr(b, e - b + 1));
}

// Value field of a "KEYWORD = value / comment" card, with string quotes resolved.
std::optional<std::string> value_of(std::string_view card) {
  if (card.size() < 10 || card.substr(8, 2) != "= ") return std::nullopt;
  std::string_view rest = card.substr(10);
  const auto start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos) return std::string();
  rest = rest.substr(start);
  if (rest.front() == '\'') {
    std::string out;
    for (std::size_t i = 1; i < rest.size(); ++i) {
      if (rest[i] == '\'') {
        if (i + 1 < rest.size() && rest[i + 1] == '\'') {
          out.push_back('\'');
          ++i;
        } else {
          break;
        }
      } else {
        out.push_back(rest[i]);
      }
    }
    return trim(out);
  }
  const auto slash = rest.find('/');
  return trim(rest.substr(0, slash));
}

}  // namespace

std::string FitsHeader::keyword_of(std::string_view card) { return trim(card.substr(0, 8)); }

bool FitsHeader::is_structural(std::string_view kw) {
  static constexpr std::array<std::string_view, 14> kFixed = {
      "SIMPLE", "XTENSION", "BITPIX", "NAXIS",  "EXTEND",   "PCOUNT",  "GCOUNT",
      "BSCALE", "BZERO",    "BLANK",  "CHECKSUM", "DATASUM", "END",   "EXTNAME"};
  if (std::find(kFixed.begin(), kFixed.end(), kw) != kFixed.end()) return true;
  if (kw.size() > 5 && kw.substr(0, 5) == "NAXIS") return true;  // NAXIS1..NAXISn
  // Tile-compression bookkeeping (ZIMAGE, ZBITPIX, ZNAXISn, ZTILEn, ZCMPTYPE, ...).
  if (kw.size() > 1 && kw[0] == 'Z' &&
      (kw == "ZIMAGE" || kw.substr(0, 5) == "ZNAXI" || kw == "ZBITPIX" || kw.substr(0, 5) == "ZTILE" ||
       kw == "ZCMPTYPE" || kw.substr(0, 5) == "ZNAME" || kw.substr(0, 4) == "ZVAL" ||
       kw == "ZQUANTIZ" || kw == "ZDITHER0" || kw == "ZSIMPLE" || kw == "ZEXTEND" ||
       kw == "ZBLANK" || kw == "ZPCOUNT" || kw == "ZGCOUNT" || kw == "ZHECKSUM" || kw == "ZDATASUM"))
    return true;
  return false;
}

void FitsHeader::add_card(std::string card) {
  if (card.size() > 80) card.resize(80);
  cards_.push_back(std::move(card));
}

const std::string* FitsHeader::find(std::string_view keyword) const {
  for (const auto& c : cards_) {
    if (keyword_of(c) == keyword) return &c;
  }
  return nullptr;
}

std::optional<std::string> FitsHeader::get_string(std::string_view keyword) const {
  const std::string* card = find(keyword);
  if (!card) return std::nullopt;
  return value_of(*card);
}

std::optional<double> FitsHeader::get_double(std::string_view keyword) const {
  auto text = get_string(keyword);
  if (!text || text->empty()) return std::nullopt;
  std::string s = *text;
  std::replace(s.begin(), s.end(), 'D', 'E');  // Fortran-style exponents are legal in FITS
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return std::nullopt;
  return v;
}

namespace {
std::string make_card(std::string_view keyword, const std::string& value, std::string_view comment) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%-8.8s= %s", std::string(keyword).c_str(), value.c_str());
  std::string card = buf;
  if (!comment.empty()) card += " / " + std::string(comment);
  card.resize(80, ' ');
  return card;
}
}  // namespace

void FitsHeader::set_card(std::string_view keyword, std::string card) {
  for (auto& c : cards_) {
    if (keyword_of(c) == keyword) {
      c = std::move(card);
      return;
    }
  }
  cards_.push_back(std::move(card));
}

void FitsHeader::set_string(std::string_view keyword, std::string_view value, std::string_view comment) {
  std::string quoted = "'";
  for (char ch : value) {
    quoted.push_back(ch);
    if (ch == '\'') quoted.push_back('\'');
  }
  while (quoted.size() < 9) quoted.push_back(' ');  // FITS: at least 8 characters inside quotes
  quoted.push_back('\'');
  char buf[96];
  std::snprintf(buf, sizeof buf, "%-20s", quoted.c_str());
  set_card(keyword, make_card(keyword, buf, comment));
}

void FitsHeader::set_double(std::string_view keyword, double value, std::string_view comment) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%20.13E", value);
  set_card(keyword, make_card(keyword, buf, comment));
}

void FitsHeader::set_int(std::string_view keyword, long long value, std::string_view comment) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%20lld", value);
  set_card(keyword, make_card(keyword, buf, comment));
}

void FitsHeader::add_history(std::string_view text) {
  std::string card = "HISTORY " + std::string(text.substr(0, 72));
  card.resize(80, ' ');
  cards_.push_back(std::move(card));
}

void FitsHeader::remove(std::string_view keyword) {
  std::erase_if(cards_, [&](const std::string& c) { return keyword_of(c) == keyword; });
}

}  // namespace gpuclean::io

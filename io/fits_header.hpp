#pragma once
// The header cards of an image HDU that describe the data (WCS, frequency, observation, history),
// kept verbatim so that every output carries them. Structural cards (BITPIX, NAXISn, BSCALE, ...)
// are left out: the writer makes its own.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclean::io {

class FitsHeader {
 public:
  /// Adds a raw 80-character card (keyword in columns 1-8).
  void add_card(std::string card);
  const std::vector<std::string>& cards() const { return cards_; }

  /// The value of a keyword, if present. Strings lose their quotes and trailing blanks.
  std::optional<std::string> get_string(std::string_view keyword) const;
  std::optional<double> get_double(std::string_view keyword) const;

  /// Replaces the card of `keyword` (or appends one) with a value in FITS fixed format.
  void set_string(std::string_view keyword, std::string_view value, std::string_view comment = {});
  void set_double(std::string_view keyword, double value, std::string_view comment = {});
  void set_int(std::string_view keyword, long long value, std::string_view comment = {});
  void add_history(std::string_view text);

  /// Removes every card with this keyword.
  void remove(std::string_view keyword);
  bool has(std::string_view keyword) const { return find(keyword) != nullptr; }

  /// True for keywords the reader drops because they describe the stored array, not the sky.
  static bool is_structural(std::string_view keyword);

  /// The keyword of a card (columns 1-8, trimmed).
  static std::string keyword_of(std::string_view card);

 private:
  const std::string* find(std::string_view keyword) const;
  void set_card(std::string_view keyword, std::string card);
  std::vector<std::string> cards_;
};

}  // namespace gpuclean::io

#pragma once
// One name table per settings enum: the CLI's parsing and help, to_string, the bench and the
// Python package all read it, so a new value is one row (and the compiler's exhaustive-switch
// warning finds the code that must learn it).

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuclean::clean {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

template <class E, std::size_t N>
constexpr std::string_view name_of(const std::array<EnumName<E>, N>& table, E value) {
  for (const auto& row : table)
    if (row.value == value) return row.name;
  return "unknown";
}

template <class E, std::size_t N>
constexpr std::optional<E> parse_name(const std::array<EnumName<E>, N>& table, std::string_view name) {
  for (const auto& row : table)
    if (row.name == name) return row.value;
  return std::nullopt;
}

/// Every name, in the table's order (the CLI's choices).
template <class E, std::size_t N>
std::vector<std::string> names_of(const std::array<EnumName<E>, N>& table) {
  std::vector<std::string> out;
  for (const auto& row : table) out.emplace_back(row.name);
  return out;
}

}  // namespace gpuclean::clean

#pragma once
// A CLI option for a settings enum, parsed through the enum's name table (clean/enum_names.hpp):
// the choices, the check and the mapping come from the one table. CLI11 2.1 cannot print these
// enums, so the option takes a name and maps it in a callback.

#include <CLI/CLI.hpp>

#include <array>
#include <string>

#include "clean/enum_names.hpp"

namespace gpuclean::app {

template <class E, std::size_t N>
CLI::Option* add_enum_option(CLI::App& app, const std::string& name, E& target,
                             const std::array<clean::EnumName<E>, N>& table, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name, [&target, &table](const std::string& v) { target = *clean::parse_name(table, v); }, help)
      ->check(CLI::IsMember(clean::names_of(table)))
      ->default_str(std::string(clean::name_of(table, target)));
}

}  // namespace gpuclean::app

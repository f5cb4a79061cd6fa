#pragma once
// A WSClean option's number: the whole text, finite; one line naming the option otherwise.
#include <cmath>
#include <cstdlib>
#include <string>

#include "clean/errors.hpp"

namespace gpuclean::app {

inline double option_number(const std::string& option, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v))
    throw clean::InvalidSettings(option + " '" + text + "' is not a number");
  return v;
}

}  // namespace gpuclean::app

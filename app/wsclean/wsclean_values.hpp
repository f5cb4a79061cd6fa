#pragma once
// The values of WSClean's options as WSClean reads them, each failure one line naming the option:
// numbers, counts, fractions, lists (commas), flux densities (aocommon's FluxDensity::Parse) and
// angles (wsclean_angle.hpp).
#include <cstddef>
#include <string>
#include <vector>

#include "app/wsclean/wsclean_option.hpp"

namespace gpuclean::app::wsclean_value {

/// The i-th value as a finite number.
double number(const GivenOption& g, std::size_t i = 0);
/// The i-th value as a whole number of at least `min`.
std::size_t count(const GivenOption& g, std::size_t min = 0, std::size_t i = 0);
/// The i-th value in (0, 1] (a gain).
double fraction(const GivenOption& g, std::size_t i = 0);
/// The i-th value as a number of at least `min` (strictly above it when `open`).
double at_least(const GivenOption& g, double min, bool open = false, std::size_t i = 0);
/// The i-th value, a comma-separated list of numbers (at least one).
std::vector<double> numbers(const GivenOption& g, std::size_t i = 0);
/// The i-th value, a comma-separated list of whole numbers of at least 0 (at least one).
std::vector<std::size_t> counts(const GivenOption& g, std::size_t i = 0);
/// The i-th value as one of `choices`; throws naming them.
std::string choice(const GivenOption& g, const std::vector<std::string>& choices, std::size_t i = 0);

/// A flux density in Jy: a number and an optional unit (Jy, mJy, µJy, nJy, KJy, and the long
/// names), as aocommon's FluxDensity::Parse reads it. Throws clean::InvalidSettings naming `option`.
double flux_density(const std::string& text, const std::string& option);

}  // namespace gpuclean::app::wsclean_value

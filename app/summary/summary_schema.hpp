#pragma once
// The schema's required keys, written once: the tests check every front end's summary against
// them, and docs/summary-json.md lists the same keys with their units.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuclean::app {

/// Where `summary` departs from the schema: a missing key ("runs[1].stop_reason: missing"), a
/// wrong schema name or version, a plane and a run that do not name each other. Empty: it
/// conforms.
std::vector<std::string> summary_schema_problems(const nlohmann::json& summary);

}  // namespace gpuclean::app

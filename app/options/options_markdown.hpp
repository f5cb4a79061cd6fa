#pragma once
// docs/options.md: the option table rendered as Markdown (scripts/options-doc.sh writes it; a test
// checks the committed file against this and against --help).

#include <string>

namespace gpuclean::app {

std::string options_markdown();

}  // namespace gpuclean::app

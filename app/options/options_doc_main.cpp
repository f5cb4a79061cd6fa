// gpuclean-options-doc: prints docs/options.md (scripts/options-doc.sh writes it there).

#include <cstdio>

#include "app/options/options_markdown.hpp"

int main() {
  std::fputs(gpuclean::app::options_markdown().c_str(), stdout);
  return 0;
}

// gpuclean-options-doc: prints docs/options.md, or with --wsclean docs/imaging.md's table of
// WSClean's options (scripts/options-doc.sh writes both).

#include <cstdio>
#include <cstring>

#include "app/options/options_markdown.hpp"
#include "app/wsclean/wsclean_option.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--wsclean") == 0)
    std::fputs(gpuclean::app::wsclean_options_markdown().c_str(), stdout);
  else
    std::fputs(gpuclean::app::options_markdown().c_str(), stdout);
  return 0;
}

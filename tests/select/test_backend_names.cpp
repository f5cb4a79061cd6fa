// The names --select accepts in every build (select/backend_names.hpp) are exactly the
// registry's exact GPU backends, so a CPU-only build checks --select as a GPU build does.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "select/backend_names.hpp"
#include "select/registry.hpp"

namespace gs = gpuclean::select;

TEST(BackendNames, AreTheRegistrysExactGpuBackends) {
  const auto& reg = gs::builtin_registry();
  std::vector<std::string> exact;
  for (const std::string& n : reg.names())
    if (n != "cpu" && reg.make(n)->exact()) exact.push_back(n);
  std::vector<std::string> listed = gs::clean_backend_names();
  EXPECT_EQ(listed.front(), "auto");
  std::sort(exact.begin(), exact.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, exact);
}

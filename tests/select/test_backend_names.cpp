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

// The registry makes each row of the one table, and each backend calls itself by its row's name.
TEST(BackendNames, EveryRowIsARegisteredBackendOfThatName) {
  const auto& reg = gs::builtin_registry();
  ASSERT_EQ(reg.names().size(), gs::kBackendNames.size());
  for (const gs::BackendName& b : gs::kBackendNames) {
    const auto sel = reg.make(b.name);
    EXPECT_EQ(sel->name(), b.name);
    EXPECT_EQ(sel->exact(), b.exact) << b.name;
    EXPECT_EQ(reg.description(b.name), b.description);
  }
}

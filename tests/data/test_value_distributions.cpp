// The value distributions of the selection tests and benchmarks: names, the narrow one's range
// and number of distinct values, and values that depend only on (seed, index).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>
#include <vector>

#include "data/value_distributions.hpp"

namespace gd = gpuclean::data;

TEST(ValueDistributions, NamesAreUniqueAndFound) {
  std::set<std::string> names;
  for (const auto& d : gd::value_distributions()) {
    EXPECT_TRUE(names.insert(d.name).second) << d.name;
    EXPECT_EQ(gd::value_distribution(d.name).name, d.name);
  }
  EXPECT_TRUE(names.count("narrow"));
  EXPECT_EQ(gd::value_distribution("same_leading_bits").name, "narrow");  // the former name
  EXPECT_THROW(gd::value_distribution("no_such"), std::invalid_argument);
}

TEST(ValueDistributions, NarrowIsAboutEightHundredFortyFloatsAboveOne) {
  std::vector<float> v(std::size_t{1} << 20);
  gd::value_distribution("narrow").fill(v, 3);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 1.0f);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 1.0001f);
  const std::set<float> distinct(v.begin(), v.end());
  EXPECT_GE(distinct.size(), 830u);
  EXPECT_LE(distinct.size(), 841u);
}

TEST(ValueDistributions, ValuesDependOnlyOnSeedAndIndex) {
  for (const auto& d : gd::value_distributions()) {
    std::vector<float> a(4096), b(4096);
    d.fill(a, 17);
    d.fill(b, 17);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << d.name;
  }
}

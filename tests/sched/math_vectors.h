// Reads tests/data/math/test_vectors.json for the sched math tests.
// The file writes ∞ as the bare token Infinity (Python's json), which is not
// JSON: LoadVectors() quotes it before parsing ("inf" / "-inf"), and Num()
// reads a number or such a string. Header-only; test code.

#ifndef FRESHD_TESTS_SCHED_MATH_VECTORS_H_
#define FRESHD_TESTS_SCHED_MATH_VECTORS_H_

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

namespace freshd::sched::testing {

inline nlohmann::json LoadVectors() {
  std::ifstream in(std::string(FRESHD_TEST_DATA_DIR) +
                   "/math/test_vectors.json");
  EXPECT_TRUE(in.good()) << "cannot open test_vectors.json";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = std::regex_replace(
      ss.str(), std::regex(R"((:\s*|\[\s*|,\s*)(-?)Infinity)"), "$1\"$2inf\"");
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

inline double Num(const nlohmann::json& j) {
  if (j.is_string()) return std::stod(j.get<std::string>());
  return j.get<double>();
}

}  // namespace freshd::sched::testing

#endif  // FRESHD_TESTS_SCHED_MATH_VECTORS_H_

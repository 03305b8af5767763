// parse/http_date.h: RFC 9110 §5.6.7 HTTP-date, the three forms a
// recipient must accept, and what is refused.

#include "parse/http_date.h"

#include <gtest/gtest.h>

#include <string>

namespace freshd::parse {
namespace {

// 1994-11-06T08:49:37Z, RFC 9110's own example.
constexpr double kExample = 784111777;

TEST(HttpDateTest, Rfc9110_AcceptsTheThreeForms) {
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), kExample);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), kExample);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), kExample);
}

TEST(HttpDateTest, EmptyGarbageAndOverlongValuesAreRefused) {
  EXPECT_FALSE(ParseHttpDate("").has_value());
  EXPECT_FALSE(ParseHttpDate("not a date").has_value());
  EXPECT_FALSE(ParseHttpDate(std::string(10000, '1')).has_value());
}

}  // namespace
}  // namespace freshd::parse

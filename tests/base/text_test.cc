// base/ascii.h and base/iso8601.h: the shared text helpers the modules
// used to copy (trimming, ASCII case, the one ISO 8601 formatter).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "base/ascii.h"
#include "base/iso8601.h"

namespace freshd {
namespace {

TEST(AsciiTest, TrimRemovesOnlySpacesAndTabsAtTheEnds) {
  EXPECT_EQ(TrimAsciiBlanks(" \t a b\t "), "a b");
  EXPECT_EQ(TrimAsciiBlanks("\ra\n"), "\ra\n");  // CR and LF are content
  EXPECT_EQ(TrimAsciiBlanks(" \t "), "");
  EXPECT_EQ(TrimAsciiBlanks(""), "");
  static_assert(TrimAsciiBlanks("  x ") == "x");
}

TEST(AsciiTest, LowerLeavesNonAsciiBytes) {
  EXPECT_EQ(AsciiLowerCopy("HeLLo \xC3\x89"), "hello \xC3\x89");
  EXPECT_TRUE(EqualsAsciiLower("Content-Type", "content-type"));
  EXPECT_FALSE(EqualsAsciiLower("Content-Typ", "content-type"));
  EXPECT_TRUE(EqualsIgnoreAsciiCase("WWW.Example.ORG", "www.example.org"));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("www.example.org", "www.example.com"));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("\xC3\x89", "\xC3\xA9"));  // É, é
}

TEST(Iso8601Test, FormatsUtcAcrossLeapDaysEpochAndCenturies) {
  EXPECT_EQ(FormatIso8601Utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatIso8601Utc(1483619690), "2017-01-05T12:34:50Z");
  EXPECT_EQ(FormatIso8601Utc(951782400), "2000-02-29T00:00:00Z");
  EXPECT_EQ(FormatIso8601Utc(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatIso8601Utc(4107542400), "2100-03-01T00:00:00Z");
  EXPECT_EQ(FormatIso8601Utc(253402300799), "9999-12-31T23:59:59Z");
}

}  // namespace
}  // namespace freshd

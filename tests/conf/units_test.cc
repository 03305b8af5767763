// Durations and sizes as written in config files and on the command line.

#include "conf/units.h"

#include <gtest/gtest.h>

namespace freshd {
namespace {

double Seconds(const char* text) {
  Result<double> d = ParseDuration(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status().ToString();
  return d.ok() ? *d : -1;
}

uint64_t Bytes(const char* text) {
  Result<uint64_t> s = ParseSize(text);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status().ToString();
  return s.ok() ? *s : 0;
}

TEST(UnitsTest, DurationsInEveryUnit) {
  EXPECT_DOUBLE_EQ(Seconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(Seconds("5s"), 5);
  EXPECT_DOUBLE_EQ(Seconds("1.5m"), 90);
  EXPECT_DOUBLE_EQ(Seconds("2h"), 7200);
  EXPECT_DOUBLE_EQ(Seconds("7d"), 7 * 86400);
  EXPECT_DOUBLE_EQ(Seconds("1w"), 7 * 86400);
  EXPECT_DOUBLE_EQ(Seconds("250us"), 250e-6);
  EXPECT_DOUBLE_EQ(Seconds("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(Seconds(" 12 "), 12);  // bare number: seconds
  EXPECT_DOUBLE_EQ(Seconds("0"), 0);
}

TEST(UnitsTest, BadDurationsAreErrorsThatQuoteTheInput) {
  for (const char* bad : {"", "-5s", "5 parsecs", "s", "5x", "1h30", "1..5s",
                          "nan", "inf", "1e3s", "99999999999999999999d"}) {
    Result<double> d = ParseDuration(bad);
    EXPECT_FALSE(d.ok()) << "accepted \"" << bad << "\"";
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), Status::Code::kInvalidArgument);
    }
  }
  EXPECT_NE(ParseDuration("5 parsecs").status().message().find("5 parsecs"),
            std::string::npos);
}

TEST(UnitsTest, SizesBinaryAndDecimal) {
  EXPECT_EQ(Bytes("512"), 512u);
  EXPECT_EQ(Bytes("64KiB"), 65536u);
  EXPECT_EQ(Bytes("10MiB"), 10u << 20);
  EXPECT_EQ(Bytes("1GiB"), 1u << 30);
  EXPECT_EQ(Bytes("10kB"), 10000u);
  EXPECT_EQ(Bytes("5MB"), 5000000u);
  EXPECT_EQ(Bytes("1.5KiB"), 1536u);
  EXPECT_EQ(Bytes("7 B"), 7u);
}

TEST(UnitsTest, BadSizesAreErrors) {
  for (const char* bad :
       {"", "-1", "10 MiBs", "MiB", "0.3B", "1EiB", "99999999999TiB"}) {
    EXPECT_FALSE(ParseSize(bad).ok()) << "accepted \"" << bad << "\"";
  }
}

TEST(UnitsTest, FormatRoundTrips) {
  for (double s : {0.0, 0.5, 1.0, 59.0, 90.0, 3600.0, 86400.0, 604800.0, 1.25,
                   2.5e-4, 123456.0}) {
    Result<double> back = ParseDuration(FormatDuration(s));
    ASSERT_TRUE(back.ok()) << FormatDuration(s);
    EXPECT_DOUBLE_EQ(*back, s) << FormatDuration(s);
  }
  EXPECT_EQ(FormatDuration(86400), "1d");
  EXPECT_EQ(FormatDuration(0.5), "500ms");
  for (uint64_t b : {0ull, 1ull, 1000ull, 1024ull, 65536ull, 10ull << 20,
                     3ull << 30, 12345ull}) {
    Result<uint64_t> back = ParseSize(FormatSize(b));
    ASSERT_TRUE(back.ok()) << FormatSize(b);
    EXPECT_EQ(*back, b);
  }
  EXPECT_EQ(FormatSize(10u << 20), "10MiB");
}

}  // namespace
}  // namespace freshd

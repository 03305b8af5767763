// base/coding.h: the one binary coding. Round trips at the edges, and a
// Decoder never reads past its input.

#include "base/coding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace freshd {
namespace {

TEST(CodingTest, FixedAndFloatRoundTripLittleEndian) {
  std::string out;
  PutFixed32(&out, 0x01020304u);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], 0x04);  // little-endian
  PutFloat(&out, -0.0f);
  PutFloat(&out, std::numeric_limits<float>::infinity());
  PutDouble(&out, 1e300);
  PutByte(&out, 0xff);
  Decoder d(out);
  uint32_t fixed = 0;
  float f1 = 1, f2 = 0;
  double d1 = 0;
  uint8_t b = 0;
  ASSERT_TRUE(d.GetFixed32(&fixed));
  ASSERT_TRUE(d.GetFloat(&f1));
  ASSERT_TRUE(d.GetFloat(&f2));
  ASSERT_TRUE(d.GetDouble(&d1));
  ASSERT_TRUE(d.GetByte(&b));
  EXPECT_EQ(fixed, 0x01020304u);
  EXPECT_TRUE(std::signbit(f1));
  EXPECT_TRUE(std::isinf(f2));
  EXPECT_EQ(d1, 1e300);
  EXPECT_EQ(b, 0xff);
  EXPECT_TRUE(d.done());
  EXPECT_FALSE(d.GetByte(&b));
}

TEST(CodingTest, VarintEdgesAndOverlongInputFail) {
  std::string out;
  PutVarint64(&out, 0);
  PutVarint64(&out, std::numeric_limits<uint64_t>::max());
  Decoder d(out);
  uint64_t v = 1;
  ASSERT_TRUE(d.GetVarint64(&v));
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(d.GetVarint64(&v));
  EXPECT_EQ(v, std::numeric_limits<uint64_t>::max());
  // Eleven continuation bytes: over-long, refused.
  std::string overlong(11, '\x80');
  Decoder bad(overlong);
  EXPECT_FALSE(bad.GetVarint64(&v));
  // A tenth byte carrying more than the top bit overflows 64 bits.
  std::string overflow(9, '\xff');
  overflow.push_back('\x02');
  Decoder over(overflow);
  EXPECT_FALSE(over.GetVarint64(&v));
}

TEST(CodingTest, LengthPrefixedIsBoundedAndConsumesNothingOnFailure) {
  std::string out;
  PutLengthPrefixed(&out, "hello");
  std::string_view view;
  Decoder too_small(out);
  EXPECT_FALSE(too_small.GetLengthPrefixed(&view, 4));
  EXPECT_EQ(too_small.remaining(), out.size());  // nothing consumed
  Decoder d(out);
  ASSERT_TRUE(d.GetLengthPrefixed(&view, 5));
  EXPECT_EQ(view, "hello");
  EXPECT_TRUE(d.done());
  // A length past the end of the input.
  std::string truncated = out.substr(0, 3);
  Decoder t(truncated);
  std::string s;
  EXPECT_FALSE(t.GetLengthPrefixed(&s, 100));
}

}  // namespace
}  // namespace freshd

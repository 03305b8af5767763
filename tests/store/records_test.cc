// Record encodings of store/records.h: round trips, limits, and that any
// byte string (random, truncated or bit-flipped valid records) decodes to a
// value or a Corruption, never a crash (run under ASan in CI).

#include "store/records.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "base/coding.h"
#include "store/keys.h"

namespace freshd::store {
namespace {

PageRecord SamplePage() {
  PageRecord p;
  p.url_key = 0x0123456789abcdefULL;
  p.url = "https://example.com/a?b=c";
  p.sched_state = std::string(100, '\x07');
  p.etag = "\"abc-123\"";
  p.last_modified = "Wed, 21 Oct 2015 07:28:00 GMT";
  p.last_status = 200;
  p.last_outcome = "ok";
  p.last_fetch_time = 1763740000.123456;
  p.content_hash = 0xfedcba9876543210ULL;
  p.sketch = std::string(512, '\xab');
  p.last_signal_lastmod = 1763739000.5;
  return p;
}

HostRecord SampleHost() {
  HostRecord h;
  h.host = "example.com:443";
  h.robots_body = "User-agent: *\nDisallow: /private\n";
  h.robots_fetch_time = 1763740000.5;
  h.robots_status = 200;
  h.robots_error_since = 0;
  h.next_allowed_time = 1763740001.5;
  h.consecutive_errors = 3;
  h.backoff_s = 120;
  h.pooled_estimates = "\x01\x02\x03";
  h.fetch_state = std::string("\x01robots\0gate", 12);
  return h;
}

TEST(RecordsTest, PageRoundTrip) {
  PageRecord in = SamplePage();
  std::string value;
  ASSERT_TRUE(EncodePageValue(in, &value).ok());
  EXPECT_EQ(value[0], 2) << "version byte";
  PageRecord out;
  out.url_key = in.url_key;  // key-derived fields come from the caller
  out.url = in.url;
  ASSERT_TRUE(DecodePageValue(value, &out).ok());
  EXPECT_EQ(out, in);
}

// A version-1 host value (before fetch_state) still decodes, with an empty
// fetch_state; the current encoder writes version 2.
TEST(RecordsTest, HostVersion1StillDecodes) {
  HostRecord h = SampleHost();
  std::string v2;
  ASSERT_TRUE(EncodeHostValue(h, &v2).ok());
  EXPECT_EQ(v2[0], 2);
  // v1 = v2 with version byte 1 and without the trailing fetch_state.
  std::string v1 = v2.substr(0, v2.size() - 1 - h.fetch_state.size());
  v1[0] = 1;
  HostRecord out;
  out.host = h.host;
  ASSERT_TRUE(DecodeHostValue(v1, &out).ok());
  HostRecord expected = h;
  expected.fetch_state.clear();
  EXPECT_EQ(out, expected);
  // A v2 value cut before its fetch_state is corrupt, not a v1 record.
  std::string cut = v2.substr(0, v2.size() - 1 - h.fetch_state.size());
  EXPECT_EQ(DecodeHostValue(cut, &out).code(), Status::Code::kCorruption);
  v2[0] = 3;
  EXPECT_EQ(DecodeHostValue(v2, &out).code(), Status::Code::kCorruption);
}

// A version-1 page value (before last_signal_lastmod) still decodes, with
// 0 (none); the current encoder writes version 2.
TEST(RecordsTest, PageVersion1StillDecodes) {
  PageRecord p = SamplePage();
  ASSERT_NE(p.last_signal_lastmod, 0);
  std::string v2;
  ASSERT_TRUE(EncodePageValue(p, &v2).ok());
  // v1 = v2 with version byte 1 and without the trailing f64.
  std::string v1 = v2.substr(0, v2.size() - 8);
  v1[0] = 1;
  PageRecord out;
  out.url_key = p.url_key;
  out.url = p.url;
  ASSERT_TRUE(DecodePageValue(v1, &out).ok());
  PageRecord expected = p;
  expected.last_signal_lastmod = 0;
  EXPECT_EQ(out, expected);
  // A v2 value cut before its last field is corrupt, not a v1 record.
  std::string cut = v2.substr(0, v2.size() - 8);
  Status s = DecodePageValue(cut, &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("last_signal_lastmod"), std::string::npos)
      << s.message();
}

TEST(RecordsTest, NegativeAndExtremeValuesRoundTrip) {
  PageRecord in;
  in.last_status = -1;
  in.last_fetch_time = -5.25;
  in.content_hash = ~0ULL;
  std::string value;
  ASSERT_TRUE(EncodePageValue(in, &value).ok());
  PageRecord out;
  ASSERT_TRUE(DecodePageValue(value, &out).ok());
  EXPECT_EQ(out, in);
}

TEST(RecordsTest, HostAndSignalRoundTrip) {
  HostRecord h = SampleHost();
  std::string value;
  ASSERT_TRUE(EncodeHostValue(h, &value).ok());
  HostRecord h2;
  h2.host = h.host;
  ASSERT_TRUE(DecodeHostValue(value, &h2).ok());
  EXPECT_EQ(h2, h);

  SignalEntry s{42, "https://example.com/x", 1763740000.25, "sitemap"};
  ASSERT_TRUE(EncodeSignalValue(s, &value).ok());
  SignalEntry s2;
  ASSERT_TRUE(DecodeSignalValue(value, &s2).ok());
  EXPECT_EQ(s2, s);
}

TEST(RecordsTest, UnknownVersionIsCorruption) {
  std::string value;
  ASSERT_TRUE(EncodePageValue(SamplePage(), &value).ok());
  value[0] = 3;
  PageRecord out;
  Status s = DecodePageValue(value, &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("unknown version 3"), std::string::npos)
      << s.message();
  value[0] = 0;
  EXPECT_EQ(DecodePageValue(value, &out).code(), Status::Code::kCorruption);
  EXPECT_EQ(DecodePageValue("", &out).code(), Status::Code::kCorruption);
}

TEST(RecordsTest, TrailingBytesAreCorruption) {
  std::string value;
  ASSERT_TRUE(EncodeHostValue(SampleHost(), &value).ok());
  value.push_back('\0');
  HostRecord out;
  EXPECT_EQ(DecodeHostValue(value, &out).code(), Status::Code::kCorruption);
}

TEST(RecordsTest, OversizedFieldsAreRejectedOnEncode) {
  PageRecord p = SamplePage();
  p.sketch.assign(kMaxBlobBytes + 1, 'x');
  std::string value = "untouched";
  EXPECT_EQ(EncodePageValue(p, &value).code(), Status::Code::kInvalidArgument);
  p = SamplePage();
  p.etag.assign(kMaxSmallFieldBytes + 1, 'e');
  EXPECT_EQ(EncodePageValue(p, &value).code(), Status::Code::kInvalidArgument);
  SignalEntry s;
  s.url.assign(kMaxUrlBytes + 1, 'u');
  EXPECT_EQ(EncodeSignalValue(s, &value).code(),
            Status::Code::kInvalidArgument);
}

TEST(RecordsTest, HugeLengthPrefixIsCorruptionNotAllocation) {
  // version 1, then a length prefix of 2^62 for sched_state.
  std::string value(1, '\x01');
  PutVarint64(&value, 1ULL << 62);
  value += "abc";
  PageRecord out;
  EXPECT_EQ(DecodePageValue(value, &out).code(), Status::Code::kCorruption);
}

TEST(CodingTest, VarintBoundaries) {
  for (uint64_t v : {0ULL, 1ULL, 127ULL, 128ULL, 16383ULL, 16384ULL,
                     (1ULL << 32) - 1, 1ULL << 32, ~0ULL}) {
    std::string s;
    PutVarint64(&s, v);
    Decoder d(s);
    uint64_t got = 0;
    ASSERT_TRUE(d.GetVarint64(&got)) << v;
    EXPECT_EQ(got, v);
    EXPECT_TRUE(d.done());
    // Every proper prefix is truncated.
    for (size_t n = 0; n < s.size(); ++n) {
      Decoder t(std::string_view(s).substr(0, n));
      EXPECT_FALSE(t.GetVarint64(&got)) << v << " prefix " << n;
    }
  }
  // 11 continuation bytes, and a 10th byte with overflow bits.
  const std::string eleven(11, '\xff');
  Decoder too_long(eleven);
  uint64_t v = 0;
  EXPECT_FALSE(too_long.GetVarint64(&v));
  std::string overflow(9, '\xff');
  overflow.push_back('\x02');
  Decoder over(overflow);
  EXPECT_FALSE(over.GetVarint64(&v));
  std::string big;
  PutVarint64(&big, 1ULL << 32);
  Decoder d32(big);
  uint32_t v32 = 0;
  EXPECT_FALSE(d32.GetVarint32(&v32));
}

TEST(KeysTest, PageKeysOrderByUrlKeyAndSeparateCollisions) {
  std::string a = PageKey(1, "https://b.example/");
  std::string b = PageKey(2, "https://a.example/");
  EXPECT_LT(a, b) << "big-endian url_key orders keys numerically";
  EXPECT_LT(PageKey(0xff, "x"), PageKey(0x100, "x"));
  // Two URLs whose 64-bit keys collide still get distinct keys.
  EXPECT_NE(PageKey(7, "https://x/1"), PageKey(7, "https://x/2"));
  uint64_t key = 0;
  std::string url;
  ASSERT_TRUE(ParsePageKey(PageKey(7, "https://x/1"), &key, &url));
  EXPECT_EQ(key, 7u);
  EXPECT_EQ(url, "https://x/1");
  EXPECT_FALSE(ParsePageKey("P1234", &key, &url));
  EXPECT_FALSE(ParsePageKey(HostKey("example.com"), &key, &url));
}

TEST(KeysTest, SignalKeysOrderByTime) {
  EXPECT_LT(SignalKey(SignalTimeMicros(10.0), 99),
            SignalKey(SignalTimeMicros(10.5), 0));
  EXPECT_EQ(SignalTimeMicros(-3), 0);
  EXPECT_EQ(SignalTimeMicros(std::nan("")), 0);
  EXPECT_EQ(SignalTimeMicros(1.5), 1500000);
}

// Fuzz-like: every decoder on random bytes, on all truncations of valid
// records and on single-bit flips must return (never crash, never over-read
// under ASan). A truncated valid record must never decode as valid.
TEST(RecordsFuzzTest, RandomAndMutatedInputsNeverCrash) {
  const uint32_t seed = 20261121;
  std::printf("RecordsFuzzTest seed=%u\n", seed);
  std::mt19937 rng(seed);
  std::string page, host, signal;
  ASSERT_TRUE(EncodePageValue(SamplePage(), &page).ok());
  ASSERT_TRUE(EncodeHostValue(SampleHost(), &host).ok());
  ASSERT_TRUE(EncodeSignalValue({1, "https://e.x/", 2.0, "api"}, &signal).ok());
  auto decode_all = [](std::string_view in) {
    PageRecord p;
    HostRecord h;
    SignalEntry s;
    int ok = 0;
    ok += DecodePageValue(in, &p).ok();
    ok += DecodeHostValue(in, &h).ok();
    ok += DecodeSignalValue(in, &s).ok();
    return ok;
  };
  for (const std::string* valid : {&page, &host, &signal}) {
    for (size_t n = 0; n < valid->size(); ++n) {
      std::string truncated = valid->substr(0, n);
      PageRecord p;
      HostRecord h;
      SignalEntry s;
      if (valid == &page) {
        EXPECT_FALSE(DecodePageValue(truncated, &p).ok());
      }
      if (valid == &host) {
        EXPECT_FALSE(DecodeHostValue(truncated, &h).ok());
      }
      if (valid == &signal) {
        EXPECT_FALSE(DecodeSignalValue(truncated, &s).ok());
      }
      decode_all(truncated);
    }
    for (size_t bit = 0; bit < valid->size() * 8; bit += 3) {
      std::string flipped = *valid;
      flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
      decode_all(flipped);
    }
  }
  std::uniform_int_distribution<int> len(0, 700), byte(0, 255);
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string in(len(rng), '\0');
    for (char& c : in) c = static_cast<char>(byte(rng));
    if (i % 2 == 0 && !in.empty()) in[0] = 1;  // get past the version byte
    decoded += decode_all(in);
  }
  std::printf("random inputs that decoded: %d of 20000\n", decoded);
}

}  // namespace
}  // namespace freshd::store

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
  p.last_signal_lastmod = 1763739000.5;
  return p;
}

HostRecord SampleHost() {
  HostRecord h;
  h.host = "example.com:443";
  h.pooled_estimates = "\x01\x02\x03";
  h.fetch_state = std::string("\x01robots\0gate", 12);
  return h;
}

TEST(RecordsTest, PageRoundTrip) {
  PageRecord in = SamplePage();
  std::string value;
  ASSERT_TRUE(EncodePageValue(in, &value).ok());
  EXPECT_EQ(value[0], 3) << "version byte";
  PageRecord out;
  out.url_key = in.url_key;  // key-derived fields come from the caller
  out.url = in.url;
  ASSERT_TRUE(DecodePageValue(value, &out).ok());
  EXPECT_EQ(out, in);
}

// Schema 1's page value, versions 1 and 2, as store/README.md described it:
// sched_state, etag, last_modified, last_status, last_outcome,
// last_fetch_time, content_hash, sketch, and (v2) last_signal_lastmod.
std::string OldPageValue(int version, const PageRecord& p,
                         std::string_view sketch) {
  std::string v(1, static_cast<char>(version));
  PutLengthPrefixed(&v, p.sched_state);
  PutLengthPrefixed(&v, p.etag);
  PutLengthPrefixed(&v, p.last_modified);
  PutVarint64(&v, static_cast<uint32_t>(p.last_status));
  PutLengthPrefixed(&v, p.last_outcome);
  PutDouble(&v, p.last_fetch_time);
  PutFixed64(&v, p.content_hash);
  PutLengthPrefixed(&v, sketch);
  if (version >= 2) PutDouble(&v, p.last_signal_lastmod);
  return v;
}

// Schema 1's host value, versions 1 and 2: seven robots and politeness
// fields, pooled_estimates, and (v2) fetch_state.
std::string OldHostValue(int version, const HostRecord& h) {
  std::string v(1, static_cast<char>(version));
  PutLengthPrefixed(&v, "User-agent: *\nDisallow: /private\n");
  PutDouble(&v, 1763740000.5);  // robots_fetch_time
  PutVarint64(&v, 200);         // robots_status
  PutDouble(&v, 0);             // robots_error_since
  PutDouble(&v, 1763740001.5);  // next_allowed_time
  PutVarint64(&v, 3);           // consecutive_errors
  PutDouble(&v, 120);           // backoff_s
  PutLengthPrefixed(&v, h.pooled_estimates);
  if (version >= 2) PutLengthPrefixed(&v, h.fetch_state);
  return v;
}

// Versions 1 and 2 still decode (a peer running an older freshd publishes
// them; the schema 1 -> 2 migration reads them): the dead sketch is dropped,
// a v1 page has no lastmod (0). The current encoder writes version 3,
// shorter by the sketch's length prefix.
TEST(RecordsTest, PageVersions1And2StillDecode) {
  const PageRecord p = SamplePage();
  ASSERT_NE(p.last_signal_lastmod, 0);
  for (int version : {1, 2}) {
    for (std::string_view sketch :
         {std::string_view(), std::string_view("stale sketch")}) {
      PageRecord out;
      out.url_key = p.url_key;
      out.url = p.url;
      ASSERT_TRUE(DecodePageValue(OldPageValue(version, p, sketch), &out).ok())
          << version;
      PageRecord expected = p;
      if (version == 1) expected.last_signal_lastmod = 0;
      EXPECT_EQ(out, expected) << version;
    }
  }
  std::string v3;
  ASSERT_TRUE(EncodePageValue(p, &v3).ok());
  EXPECT_EQ(v3.size() + 1, OldPageValue(2, p, "").size());
  // A v2 value cut before its last field is corrupt, not a v1 record.
  std::string v2 = OldPageValue(2, p, "");
  PageRecord out;
  Status s = DecodePageValue(v2.substr(0, v2.size() - 8), &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("last_signal_lastmod"), std::string::npos)
      << s.message();
}

// Host versions 1 and 2 decode without their seven dead fields; v1 has no
// fetch_state.
TEST(RecordsTest, HostVersions1And2StillDecode) {
  const HostRecord h = SampleHost();
  for (int version : {1, 2}) {
    HostRecord out;
    out.host = h.host;
    ASSERT_TRUE(DecodeHostValue(OldHostValue(version, h), &out).ok())
        << version;
    HostRecord expected = h;
    if (version == 1) expected.fetch_state.clear();
    EXPECT_EQ(out, expected) << version;
  }
  std::string v2 = OldHostValue(2, h);
  HostRecord out;
  // A v2 value cut before its fetch_state is corrupt, not a v1 record.
  EXPECT_EQ(
      DecodeHostValue(v2.substr(0, v2.size() - 1 - h.fetch_state.size()), &out)
          .code(),
      Status::Code::kCorruption);
  v2[0] = 4;
  EXPECT_EQ(DecodeHostValue(v2, &out).code(), Status::Code::kCorruption);
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

TEST(RecordsTest, HostRoundTrip) {
  HostRecord h = SampleHost();
  std::string value;
  ASSERT_TRUE(EncodeHostValue(h, &value).ok());
  EXPECT_EQ(value[0], 3) << "version byte";
  HostRecord h2;
  h2.host = h.host;
  ASSERT_TRUE(DecodeHostValue(value, &h2).ok());
  EXPECT_EQ(h2, h);
}

TEST(RecordsTest, UnknownVersionIsCorruption) {
  std::string value;
  ASSERT_TRUE(EncodePageValue(SamplePage(), &value).ok());
  value[0] = 4;
  PageRecord out;
  Status s = DecodePageValue(value, &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("unknown version 4"), std::string::npos)
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
  p.sched_state.assign(kMaxBlobBytes + 1, 'x');
  std::string value = "untouched";
  EXPECT_EQ(EncodePageValue(p, &value).code(), Status::Code::kInvalidArgument);
  p = SamplePage();
  p.etag.assign(kMaxSmallFieldBytes + 1, 'e');
  EXPECT_EQ(EncodePageValue(p, &value).code(), Status::Code::kInvalidArgument);
  HostRecord h = SampleHost();
  h.fetch_state.assign(kMaxBlobBytes + 1, 'f');
  EXPECT_EQ(EncodeHostValue(h, &value).code(), Status::Code::kInvalidArgument);
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

// Fuzz-like: every decoder on random bytes, on all truncations of valid
// records and on single-bit flips must return (never crash, never over-read
// under ASan). A truncated valid record must never decode as valid.
TEST(RecordsFuzzTest, RandomAndMutatedInputsNeverCrash) {
  const uint32_t seed = 20261121;
  std::printf("RecordsFuzzTest seed=%u\n", seed);
  std::mt19937 rng(seed);
  std::string page, host, feed;
  ASSERT_TRUE(EncodePageValue(SamplePage(), &page).ok());
  ASSERT_TRUE(EncodeHostValue(SampleHost(), &host).ok());
  FeedEvent event;
  event.url = "https://e.x/";
  event.kind = "changed";
  event.warc_file = "f.warc.gz";
  ASSERT_TRUE(EncodeFeedValue(event, &feed).ok());
  auto decode_all = [](std::string_view in) {
    PageRecord p;
    HostRecord h;
    FeedEvent e;
    int ok = 0;
    ok += DecodePageValue(in, &p).ok();
    ok += DecodeHostValue(in, &h).ok();
    ok += DecodeFeedValue(in, &e).ok();
    return ok;
  };
  for (const std::string* valid : {&page, &host, &feed}) {
    for (size_t n = 0; n < valid->size(); ++n) {
      std::string truncated = valid->substr(0, n);
      PageRecord p;
      HostRecord h;
      FeedEvent e;
      if (valid == &page) {
        EXPECT_FALSE(DecodePageValue(truncated, &p).ok());
      }
      if (valid == &host) {
        EXPECT_FALSE(DecodeHostValue(truncated, &h).ok());
      }
      if (valid == &feed) {
        EXPECT_FALSE(DecodeFeedValue(truncated, &e).ok());
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

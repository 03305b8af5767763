// ContentDecoder: gzip / deflate (zlib and raw) / br / identity decoding,
// streaming in arbitrary pieces, corrupt input, and the decoded-size cap
// that stops a decompression bomb.

#include "fetch/content_decoder.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/fetch/fetch_helpers.h"

namespace freshd::fetch {
namespace {

using testing::Compress;

std::string Text() {
  std::string s;
  for (int i = 0; i < 2000; ++i)
    s += "line " + std::to_string(i) + " of text\n";
  return s;
}

std::string DecodeAll(ContentEncoding enc, const std::string& in, size_t piece,
                      ContentDecoder::State* state, uint64_t cap = 1 << 24) {
  ContentDecoder d(enc, cap);
  std::string out;
  *state = ContentDecoder::State::kOk;
  for (size_t i = 0; i < in.size() && *state == ContentDecoder::State::kOk;
       i += piece) {
    *state = d.Feed(std::string_view(in).substr(i, piece), &out);
  }
  return out;
}

// The zlib family: an encoding and the window bits that produce it.
struct ZlibCase {
  ContentEncoding enc;
  int bits;
};
constexpr ZlibCase kZlibCases[] = {{ContentEncoding::kGzip, 31},
                                   {ContentEncoding::kDeflate, 15},
                                   {ContentEncoding::kDeflate, -15}};

TEST(ContentDecoderTest, ParsesEncodingNames) {
  EXPECT_EQ(ParseContentEncoding(""), ContentEncoding::kIdentity);
  EXPECT_EQ(ParseContentEncoding(" Identity "), ContentEncoding::kIdentity);
  EXPECT_EQ(ParseContentEncoding("GZIP"), ContentEncoding::kGzip);
  EXPECT_EQ(ParseContentEncoding("x-gzip"), ContentEncoding::kGzip);
  EXPECT_EQ(ParseContentEncoding("deflate"), ContentEncoding::kDeflate);
  EXPECT_EQ(ParseContentEncoding("br"), ContentEncoding::kBrotli);
  EXPECT_FALSE(ParseContentEncoding("gzip, br").has_value());
  EXPECT_FALSE(ParseContentEncoding("compress").has_value());
}

TEST(ContentDecoderTest, GzipZlibAndRawDeflateRoundTripInAnyPieceSize) {
  const std::string text = Text();
  for (ZlibCase c : kZlibCases) {
    std::string packed = Compress(text, c.bits);
    for (size_t piece : {size_t{1}, size_t{7}, size_t{4096}, packed.size()}) {
      ContentDecoder::State st;
      EXPECT_EQ(DecodeAll(c.enc, packed, piece, &st), text)
          << "bits " << c.bits << " piece " << piece;
      EXPECT_EQ(st, ContentDecoder::State::kOk);
    }
  }
}

TEST(ContentDecoderTest, ConcatenatedGzipMembersAreAllDecoded) {
  std::string packed = Compress("first;", 31) + Compress("second", 31);
  ContentDecoder::State st;
  EXPECT_EQ(DecodeAll(ContentEncoding::kGzip, packed, 3, &st), "first;second");
  EXPECT_EQ(st, ContentDecoder::State::kOk);
}

TEST(ContentDecoderTest, BrotliDecodes) {
  // Produced by BrotliEncoderCompress(quality 9) from the text below.
  const std::string packed(
      "\x1b\x36\x00\x00\xc4\x6d\x6c\x5d\xc7\x73\x1c\xf1\x0d\x9f\x10\x04\x11"
      "\x38\xe4\xc0\xe1\x61\x76\x84\x16\x6c\xc0\x61\x60\x6f\x7b\xc7\x92\x50"
      "\x9b\x1e\xc6\xb9\xfd\x29\xbe\xa5\xb2\xf5\x43\x31\xa7\x58\x02",
      49);
  for (size_t piece : {size_t{1}, size_t{49}}) {
    ContentDecoder::State st;
    EXPECT_EQ(DecodeAll(ContentEncoding::kBrotli, packed, piece, &st),
              "<html><body>brotli says hello hello hello</body></html>");
    EXPECT_EQ(st, ContentDecoder::State::kOk);
  }
}

TEST(ContentDecoderTest, CorruptStreamsAreReportedNotCrashed) {
  std::mt19937 rng(20261121);  // fixed seed
  std::string junk(3000, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  for (ContentEncoding enc : {ContentEncoding::kGzip, ContentEncoding::kDeflate,
                              ContentEncoding::kBrotli}) {
    ContentDecoder::State st;
    DecodeAll(enc, "\x1f\x8b" + junk, 100, &st);
    EXPECT_EQ(st, ContentDecoder::State::kCorrupt);
  }
}

TEST(ContentDecoderTest, BombStopsAtTheCap) {
  std::string zeros(20 << 20, '\0');  // 20 MiB of zeros: ~20 KiB gzipped
  std::string bomb = Compress(zeros, 31);
  ASSERT_LT(bomb.size(), 100u * 1024);
  ContentDecoder::State st;
  std::string out =
      DecodeAll(ContentEncoding::kGzip, bomb, bomb.size(), &st, 1 << 20);
  EXPECT_EQ(st, ContentDecoder::State::kTooLarge);
  EXPECT_EQ(out.size(), 1u << 20);
}

// A budget per call bounds each call's work; the input not decoded yet is
// held back and Feed("") drains it to exactly the same bytes.
TEST(ContentDecoderTest, BudgetedCallsHoldBackInputAndDrainToTheSameBytes) {
  std::string text;
  for (int i = 0; i < 60000; ++i) text += "row " + std::to_string(i * 7) + ";";
  for (ZlibCase c : kZlibCases) {
    const std::string packed = Compress(text, c.bits);
    const uint64_t budget = 32 * 1024;
    ContentDecoder d(c.enc, 1 << 24);
    std::string out;
    int calls = 0;
    for (size_t i = 0; i < packed.size(); i += 8192) {
      size_t before = out.size();
      ASSERT_EQ(d.Feed(std::string_view(packed).substr(i, 8192), &out, budget),
                ContentDecoder::State::kOk);
      EXPECT_LE(out.size() - before, budget + 16 * 1024);  // one step over
      ++calls;
    }
    EXPECT_TRUE(d.has_pending()) << "bits " << c.bits;  // ratio > 4: behind
    while (d.has_pending()) {
      size_t before = out.size();
      ASSERT_EQ(d.Feed("", &out, budget), ContentDecoder::State::kOk);
      EXPECT_LE(out.size() - before, budget + 16 * 1024);
      ASSERT_LT(++calls, 10000);
    }
    EXPECT_EQ(out, text) << "bits " << c.bits;
    EXPECT_GT(calls, static_cast<int>(text.size() / (budget + 16 * 1024)));
  }
}

TEST(ContentDecoderTest, BudgetedBombStopsAtTheCap) {
  const std::string bomb = Compress(std::string(20 << 20, '\0'), 31);
  ContentDecoder d(ContentEncoding::kGzip, 4 << 20);
  std::string out;
  ContentDecoder::State st = d.Feed(bomb, &out, 1 << 20);
  int calls = 1;
  while (st == ContentDecoder::State::kOk && d.has_pending()) {
    st = d.Feed("", &out, 1 << 20);
    ++calls;
  }
  EXPECT_EQ(st, ContentDecoder::State::kTooLarge);
  EXPECT_EQ(out.size(), 4u << 20);
  EXPECT_GE(calls, 4);
  EXPECT_FALSE(d.has_pending());
}

TEST(ContentDecoderTest, IdentityIsCappedToo) {
  ContentDecoder d(ContentEncoding::kIdentity, 10);
  std::string out;
  EXPECT_EQ(d.Feed("12345", &out), ContentDecoder::State::kOk);
  EXPECT_EQ(d.Feed("678901", &out), ContentDecoder::State::kTooLarge);
  EXPECT_EQ(out, "1234567890");
  EXPECT_EQ(d.Feed("x", &out), ContentDecoder::State::kTooLarge);
}

}  // namespace
}  // namespace freshd::fetch

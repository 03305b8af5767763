// parse/shingle.h: word k-gram shingle sets, exact fragment staleness
// (Olston & Pandey 2008 §2.1.1, eq. 3) and the normalized text hash.

#include "parse/shingle.h"

#include <gtest/gtest.h>

#include <string>

namespace freshd::parse {
namespace {

constexpr uint64_t kSeed = 0x0123456789abcdefULL;

std::string Words(int from, int to) {  // "w<from> ... w<to-1>"
  std::string s;
  for (int i = from; i < to; ++i) s += "w" + std::to_string(i) + " ";
  return s;
}

TEST(ShingleTest, OneShinglePerWordKGram) {
  EXPECT_EQ(ShingleText("a b c d e", 2, kSeed).size(), 4u);
  EXPECT_EQ(ShingleText("a b c d e", 4, kSeed).size(), 2u);
  EXPECT_EQ(ShingleText("a b c d e", 1, kSeed).size(), 5u);
  EXPECT_EQ(ShingleText(Words(0, 100), 4, kSeed).size(), 97u);
}

TEST(ShingleTest, RepeatedShinglesCountOnce) {
  EXPECT_EQ(ShingleText("a b a b a b a", 2, kSeed).size(), 2u);
  EXPECT_EQ(ShingleText("x x x x x x", 3, kSeed).size(), 1u);
}

TEST(ShingleTest, ShortTextsHaveOneShingleEmptyHaveNone) {
  EXPECT_EQ(ShingleText("a b", 4, kSeed).size(), 1u);
  EXPECT_EQ(ShingleText(" ... ", 4, kSeed).size(), 0u);
  EXPECT_NE(ShingleText("a b", 4, kSeed), ShingleText("a c", 4, kSeed));
}

TEST(ShingleTest, SetIsSortedUnique) {
  ShingleSet s = ShingleText(Words(0, 500) + Words(0, 500), 4, kSeed);
  // 497 4-grams per copy (the same in both) plus 3 across the seam.
  EXPECT_EQ(s.size(), 497u + 3u);
  for (size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i - 1], s[i]);
}

TEST(ShingleTest, CasePunctuationAndSpacingDoNotMatter) {
  EXPECT_EQ(ShingleText("Hello,   World! How are you?", 2, kSeed),
            ShingleText("hello world how ARE you", 2, kSeed));
  EXPECT_EQ(TextHash("Hello,   World!", kSeed), TextHash("hello world", kSeed));
  EXPECT_NE(TextHash("hello world", kSeed), TextHash("hello word", kSeed));
  EXPECT_NE(TextHash("hello world", kSeed), TextHash("world hello", kSeed));
}

TEST(ShingleTest, WordOrderMatters) {
  ShingleSet a = ShingleText("a b c", 2, kSeed);
  ShingleSet b = ShingleText("c b a", 2, kSeed);
  EXPECT_DOUBLE_EQ(ExactDivergence(a, b), 1.0);
}

TEST(ShingleTest, SeedChangesEveryHash) {
  ShingleSet a = ShingleText(Words(0, 50), 4, 1);
  ShingleSet b = ShingleText(Words(0, 50), 4, 2);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(IntersectionSize(a, b), 0u);
  EXPECT_NE(TextHash("x", 1), TextHash("x", 2));
}

TEST(ShingleTest, ExactDivergenceIsOneMinusJaccard) {
  // k = 1: A = 10 words, B = A + 1 word: J = 10/11.
  EXPECT_NEAR(ExactDivergence(ShingleText(Words(0, 10), 1, kSeed),
                              ShingleText(Words(0, 11), 1, kSeed)),
              1.0 / 11, 1e-12);
  // k = 2: 9 of B's 10 bigrams are A's: D = 1 - 9/10.
  EXPECT_NEAR(ExactDivergence(ShingleText(Words(0, 10), 2, kSeed),
                              ShingleText(Words(0, 11), 2, kSeed)),
              0.1, 1e-12);
  // Half the words replaced (k = 1): |A∩B| = 50, |A∪B| = 150.
  EXPECT_NEAR(ExactDivergence(ShingleText(Words(0, 100), 1, kSeed),
                              ShingleText(Words(50, 150), 1, kSeed)),
              1.0 - 50.0 / 150, 1e-12);
  ShingleSet empty;
  EXPECT_EQ(ExactDivergence(empty, empty), 0.0);
  EXPECT_EQ(ExactDivergence(empty, ShingleText("a", 1, kSeed)), 1.0);
  ShingleSet a = ShingleText(Words(0, 30), 4, kSeed);
  EXPECT_EQ(ExactDivergence(a, a), 0.0);
}

TEST(ShingleTest, FingerprintAgreesWithTheSeparateFunctions) {
  std::string text =
      "The quick brown fox jumps over the lazy dog. " + Words(0, 300);
  TextFingerprint fp = FingerprintText(text, 4, 64, kSeed, true);
  ShingleSet set = ShingleText(text, 4, kSeed);
  EXPECT_EQ(fp.shingles, set);
  EXPECT_EQ(fp.shingle_count, set.size());
  EXPECT_EQ(fp.token_count, 9u + 300u);
  EXPECT_EQ(fp.text_hash, TextHash(text, kSeed));
  EXPECT_EQ(fp.sketch, Sketch(set, 64));
  TextFingerprint lean = FingerprintText(text, 4, 64, kSeed, false);
  EXPECT_TRUE(lean.shingles.empty());
  EXPECT_EQ(lean.shingle_count, set.size());
  EXPECT_EQ(lean.sketch, fp.sketch);
}

}  // namespace
}  // namespace freshd::parse

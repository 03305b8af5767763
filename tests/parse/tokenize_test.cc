// parse/tokenize.h: word tokens are lowercased runs of Unicode letters and
// digits; everything else separates; CJK is one token per character.

#include "parse/tokenize.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace freshd::parse {
namespace {

std::vector<std::string> Tokens(std::string_view text) {
  std::vector<std::string> out;
  WordTokenizer tok(text);
  std::string_view t;
  while (tok.Next(&t)) out.emplace_back(t);
  return out;
}

using V = std::vector<std::string>;

TEST(TokenizeTest, AsciiWordsAreLowercasedAndPunctuationSplits) {
  EXPECT_EQ(Tokens("Hello, World! 42x foo_bar don't  a-b\tc\nD"),
            (V{"hello", "world", "42x", "foo", "bar", "don", "t", "a", "b", "c",
               "d"}));
  EXPECT_EQ(Tokens(""), V{});
  EXPECT_EQ(Tokens(" \n\t.,;:!?()[]{}<>/\\|@#$%^&*-+=~`'\""), V{});
}

TEST(TokenizeTest, NonAsciiLettersAreWordCharactersAndLowercased) {
  EXPECT_EQ(Tokens("Ünïcödé ÀÉÎ Straße ĀŁŒŸ ΑΒΓ ΣΊΣΥΦΟΣ Σίσυφος МОСКВА Ёж"),
            (V{"ünïcödé", "àéî", "straße", "āłœÿ", "αβγ", "σίσυφοσ", "σίσυφοσ",
               "москва", "ёж"}));
  // Scripts without case mapping here are kept as they are.
  EXPECT_EQ(Tokens("עברית العربية हिन्दी ٣٤"),
            (V{"עברית", "العربية", "हिन्दी", "٣٤"}));
}

TEST(TokenizeTest, UnicodePunctuationAndSpacesSeparate) {
  EXPECT_EQ(
      Tokens("a—b…c «d» e\u00A0f\u2003g・h「i」j©k€l😀m"),
      (V{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"}));
}

TEST(TokenizeTest, HanAndKanaAreOneTokenPerCharacter) {
  EXPECT_EQ(Tokens("日本語テキストabc한국어"),
            (V{"日", "本", "語", "テ", "キ", "ス", "ト", "abc한국어"}));
}

TEST(TokenizeTest, InvalidUtf8Separates) {
  EXPECT_EQ(Tokens("ab\xFF"
                   "cd\xC3"),
            (V{"ab", "cd"}));
  EXPECT_EQ(Tokens("\xE0\x80\x80x\xED\xA0\x80y"),
            (V{"x", "y"}));  // overlong, surrogate
}

TEST(TokenizeTest, LongTokensAreCut) {
  std::string word(1000, 'a');
  std::vector<std::string> t = Tokens(word + " b");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].size(), kMaxTokenBytes);
  EXPECT_EQ(t[1], "b");
}

TEST(TokenizeTest, CodePointClasses) {
  EXPECT_TRUE(IsWordCodePoint(U'é'));
  EXPECT_TRUE(IsWordCodePoint(U'ж'));
  EXPECT_FALSE(IsWordCodePoint(U'\u00A0'));
  EXPECT_FALSE(IsWordCodePoint(U'\u2014'));
  EXPECT_FALSE(IsWordCodePoint(0xFFFD));
  EXPECT_TRUE(IsSingletonCodePoint(U'漢'));
  EXPECT_FALSE(IsSingletonCodePoint(U'한'));
  EXPECT_EQ(LowerCodePoint(U'Ä'), U'ä');
  EXPECT_EQ(LowerCodePoint(U'×'), U'×');
  EXPECT_EQ(LowerCodePoint(U'Ж'), U'ж');
}

}  // namespace
}  // namespace freshd::parse

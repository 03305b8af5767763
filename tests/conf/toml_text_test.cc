// ParseTomlText: the guarded toml11 parse behind every TOML file freshd
// reads. Invalid UTF-8 and oversized input are refused before toml11 sees
// them (toml11 3.7's UTF-8 error path reads out of bounds: the regression
// input below is the fuzzer's, fuzz/web_spec_fuzz.cc), and syntax errors
// come back as InvalidArgument with the line.

#include "conf/toml_text.h"

#include <gtest/gtest.h>

#include <string>

namespace freshd {
namespace {

TEST(TomlTextTest, ParsesValidToml) {
  Result<toml::value> v = ParseTomlText("a = 1\n[t]\nb = \"ü\"\n", "ok.toml");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(toml::find<int>(*v, "a"), 1);
  EXPECT_EQ(toml::find<std::string>(toml::find(*v, "t"), "b"), "ü");
}

TEST(TomlTextTest, InvalidUtf8IsAnErrorWithItsLine) {
  // A literal-string key with a stray continuation byte: what crashed
  // toml11 under AddressSanitizer.
  const std::string text = "x = 1\n'# noisy\xa0with' = 2\n";
  Result<toml::value> v = ParseTomlText(text, "bad.toml");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Status::Code::kInvalidArgument);
  const std::string e = v.status().ToString();
  EXPECT_NE(e.find("bad.toml:2: TOML syntax error: not valid UTF-8"),
            std::string::npos)
      << e;
  // Overlong and surrogate forms are invalid too.
  EXPECT_FALSE(ParseTomlText("a = \"\xc0\xaf\"\n", "t").ok());
  EXPECT_FALSE(ParseTomlText("a = \"\xed\xa0\x80\"\n", "t").ok());
}

TEST(TomlTextTest, SyntaxErrorsAndSizeAreErrorsNotExceptions) {
  Result<toml::value> v = ParseTomlText("a = 1\nb = = 2\n", "syntax.toml");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().ToString().find("syntax.toml:2: TOML syntax error"),
            std::string::npos)
      << v.status().ToString();
  const std::string big(100, '#');
  Result<toml::value> b = ParseTomlText(big, "big.toml", 99);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().ToString().find("larger than 99 bytes"),
            std::string::npos);
  EXPECT_TRUE(ParseTomlText(big, "big.toml", 100).ok());
}

}  // namespace
}  // namespace freshd

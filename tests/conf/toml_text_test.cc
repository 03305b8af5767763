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
  EXPECT_NE(b.status().ToString().find("big.toml:1: larger than 99 bytes"),
            std::string::npos);
  EXPECT_TRUE(ParseTomlText(big, "big.toml", 100).ok());
}

Status::Code CodeOf(const std::string& text) {
  return ParseTomlText(text, "t").status().code();
}

std::string ErrorOf(const std::string& text) {
  return ParseTomlText(text, "t.toml").status().message();
}

// Issue #26: toml11 recurses once per nesting level; 10,000 '[' overflowed
// the stack. Depth is bounded before toml11 sees the text.
TEST(TomlTextTest, NestingIsBoundedBeforeToml11) {
  auto nested = [](size_t n, std::string open, std::string close) {
    std::string s = "x = ";
    for (size_t i = 0; i < n; ++i) s += open;
    s += "1";
    for (size_t i = 0; i < n; ++i) s += close;
    return s + "\n";
  };
  EXPECT_TRUE(ParseTomlText(nested(32, "[", "]"), "t").ok());
  EXPECT_EQ(ErrorOf(nested(33, "[", "]")),
            "t.toml:1: TOML syntax error: nested deeper than 32 levels "
            "(arrays, inline tables, table headers)");
  EXPECT_EQ(ErrorOf("a = 1\n" + nested(10000, "[", "]")).rfind("t.toml:2:", 0),
            0u);
  EXPECT_TRUE(ParseTomlText(nested(32, "{a = ", "}"), "t").ok());
  EXPECT_EQ(CodeOf(nested(33, "{a = ", "}")), Status::Code::kInvalidArgument);
  EXPECT_EQ(CodeOf(nested(20000, "[{a = ", "}]")),
            Status::Code::kInvalidArgument);
  // A header line counts its brackets: "[[[" is three levels, not a crash.
  EXPECT_EQ(CodeOf(std::string(40, '[') + "t" + std::string(40, ']') + "\n"),
            Status::Code::kInvalidArgument);
  // Brackets inside strings and comments are not nesting.
  const std::string s = std::string(100, '[');
  for (std::string text :
       {"a = \"" + s + "\"\n", "a = '" + s + "'\n", "# " + s + "\n",
        "a = \"\"\"\n" + s + "\n\"\"\"\n", "a = '''" + s + "'''\n",
        "a = \"\\\"" + s + "\"\n", "\"" + s + "\" = 1\n"}) {
    Result<toml::value> v = ParseTomlText(text, "t");
    EXPECT_TRUE(v.ok()) << text << ": " << v.status().ToString();
  }
  // A multi-line string ending in extra quotes still ends there.
  EXPECT_TRUE(ParseTomlText("a = \"\"\"x\"\"\"\"\"\nb = [[1]]\n", "t").ok());
}

TEST(TomlTextTest, DottedKeysAndLinesAreBounded) {
  std::string key = "k";
  for (int i = 1; i < 32; ++i) key += ".k";
  EXPECT_TRUE(ParseTomlText(key + " = 1\n", "t").ok());
  EXPECT_EQ(ErrorOf("\n" + key + ".k = 1\n"),
            "t.toml:2: TOML syntax error: key of more than 32 dotted parts");
  EXPECT_EQ(CodeOf("[" + key + ".k]\n"), Status::Code::kInvalidArgument);
  EXPECT_EQ(CodeOf("x = {" + key + ".k = 1}\n"),
            Status::Code::kInvalidArgument);
  // Dots in values are not key parts.
  std::string floats = "x = [";
  for (int i = 0; i < 100; ++i) floats += "1.5, ";
  EXPECT_TRUE(ParseTomlText(floats + "2.5]\n", "t").ok());
  const std::string line(kMaxTomlLineBytes, '#');
  EXPECT_TRUE(ParseTomlText(line + "\n", "t").ok());
  EXPECT_EQ(ErrorOf("a = 1\n" + line + "#\nb = 2\n"),
            "t.toml:2: TOML syntax error: line longer than 16 KiB");
  EXPECT_EQ(CodeOf("a = \"\"\"\n" + line + "x\"\"\"\n"),
            Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace freshd

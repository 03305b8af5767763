// parse/html_tokenizer.h against the WHATWG tokenizer rules it models
// (HTML §13.2.5): tag and attribute syntax, comments, raw text, EOF.

#include "parse/html_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace freshd::parse {
namespace {

// Records tokens as strings: "T:text", "<name a=v ...>", "</name>".
class Recorder : public HtmlTokenHandler {
 public:
  void OnText(std::string_view raw) override {
    tokens.push_back("T:" + std::string(raw));
  }
  bool OnTag(const HtmlTag& tag) override {
    std::string s = tag.end_tag ? "</" : "<";
    s += tag.name;
    for (size_t i = 0; i < tag.num_attributes; ++i) {
      s += " " + std::string(tag.attributes[i].name) + "=" +
           std::string(tag.attributes[i].value);
    }
    if (tag.self_closing) s += " /";
    tokens.push_back(s + ">");
    return stop_after.empty() || tag.name != stop_after;
  }
  std::vector<std::string> tokens;
  std::string stop_after;
};

std::vector<std::string> Tokens(std::string_view html) {
  Recorder r;
  HtmlTokenizer t;
  t.Run(html, &r);
  return r.tokens;
}

using V = std::vector<std::string>;

TEST(HtmlTokenizerTest, TagsAndAttributes) {
  EXPECT_EQ(Tokens("<DIV Class=\"a b\" id='x' data-v=1 hidden>t</Div>"),
            (V{"<div Class=a b id=x data-v=1 hidden=>", "T:t", "</div>"}));
  EXPECT_EQ(Tokens("<a href = \"x\"/><br/><img src=a/b.png/>"),
            (V{"<a href=x />", "<br />", "<img src=a/b.png/>"}));
  EXPECT_EQ(Tokens("<p =x a=\"1\"b=2>"), (V{"<p =x= a=1 b=2>"}));
  EXPECT_EQ(Tokens("<a\nhref\n=\nx>"), (V{"<a href=x>"}));
}

TEST(HtmlTokenizerTest, FindIsCaseInsensitiveAndFirstWins) {
  HtmlTokenizer t;
  struct H : HtmlTokenHandler {
    void OnText(std::string_view) override {}
    bool OnTag(const HtmlTag& tag) override {
      const HtmlAttribute* a = tag.Find("href");
      value = a ? std::string(a->value) : "none";
      return true;
    }
    std::string value;
  } h;
  t.Run("<a HREF=first href=second>", &h);
  EXPECT_EQ(h.value, "first");
}

TEST(HtmlTokenizerTest, CommentsAndDeclarationsAreSkipped) {
  EXPECT_EQ(Tokens("a<!-- <b> -->c<!DOCTYPE html>d<?xml x?>e</ x>f"),
            (V{"T:a", "T:c", "T:d", "T:e", "T:f"}));
  EXPECT_EQ(Tokens("a<!-- x -- y -->b"), (V{"T:a", "T:b"}));
}

TEST(HtmlTokenizerTest, RawTextAndRcdata) {
  EXPECT_EQ(Tokens("<script><b>x</b></script >y"),
            (V{"<script>", "</script>", "T:y"}));
  EXPECT_EQ(Tokens("<title><b>x</b></title>"),
            (V{"<title>", "T:<b>x</b>", "</title>"}));
  EXPECT_EQ(Tokens("<style>a</stylex>b"), (V{"<style>"}));  // unterminated
}

TEST(HtmlTokenizerTest, LiteralLessThanAndEof) {
  EXPECT_EQ(Tokens("1 < 2 <"), (V{"T:1 < 2 <"}));
  EXPECT_EQ(Tokens("x</"), (V{"T:x</"}));
  EXPECT_EQ(Tokens("x<a href='y"), (V{"T:x"}));
  EXPECT_EQ(Tokens("x<a"), (V{"T:x"}));
}

TEST(HtmlTokenizerTest, HandlerCanStop) {
  Recorder r;
  r.stop_after = "meta";
  HtmlTokenizer t;
  t.Run("<head><meta charset=x><p>later", &r);
  EXPECT_EQ(r.tokens, (V{"<head>", "<meta charset=x>"}));
}

TEST(HtmlTokenizerTest, LongNamesAndManyAttributesAreBounded) {
  std::string name(100, 'q');
  std::string html = "<" + name;
  for (int i = 0; i < 200; ++i) html += " a" + std::to_string(i) + "=v";
  html += ">";
  HtmlTokenizer t;
  struct H : HtmlTokenHandler {
    void OnText(std::string_view) override {}
    bool OnTag(const HtmlTag& tag) override {
      name_size = tag.name.size();
      attrs = tag.num_attributes;
      return true;
    }
    size_t name_size = 0, attrs = 0;
  } h;
  t.Run(html, &h);
  EXPECT_EQ(h.name_size, HtmlTokenizer::kMaxTagName);
  EXPECT_EQ(h.attrs, HtmlTokenizer::kMaxAttributes);
}

}  // namespace
}  // namespace freshd::parse

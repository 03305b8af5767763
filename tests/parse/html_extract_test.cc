// Behaviour of parse/html_extract.h: what counts as visible text, character
// references, word/block separation, links and their resolution, canonical,
// meta robots / X-Robots-Tag, charsets, limits and malformed markup.
// Rules cite the WHATWG HTML Standard (HTML §...) or are freshd choices.

#include "parse/html_extract.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace freshd::parse {
namespace {

constexpr const char* kUrl = "http://example.com/dir/page.html";

ExtractedPage Extract(std::string_view html, std::string_view ct = "text/html",
                      std::string_view url = kUrl,
                      const ExtractLimits& limits = {},
                      std::string_view x_robots = {}) {
  Result<ExtractedPage> page = ExtractHtml(html, ct, url, limits, x_robots);
  EXPECT_TRUE(page.ok()) << page.status().ToString();
  return page.ok() ? std::move(page).value() : ExtractedPage{};
}

std::vector<std::string> Urls(const ExtractedPage& page) {
  std::vector<std::string> out;
  for (const Link& l : page.links) out.push_back(l.url);
  return out;
}

TEST(HtmlExtractTest, HiddenElementsAndCommentsAreNotText) {
  ExtractedPage p = Extract(
      "<html><head><title>T</title><style>p{color:red}</style>"
      "<script>var x = '<p>not text</p>';</script></head><body>"
      "one<!-- hidden comment --> two<noscript>enable js</noscript>"
      "<template><p>tmpl</p><template>nested</template>still</template>"
      " three<script type=module>alert(1)</script></body></html>");
  EXPECT_EQ(p.text, "one two three");
  EXPECT_EQ(p.title, "T");
}

TEST(HtmlExtractTest, ScriptEndsOnlyAtItsEndTag) {
  // HTML §13.2.5.4: script data ends at "</script" + space, '/' or '>'.
  ExtractedPage p = Extract(
      "a<script>if (x</scripts) y = '</p>';</SCRIPT >b<style>"
      "</styl></style>c");
  EXPECT_EQ(p.text, "abc");
}

TEST(HtmlExtractTest, CharacterReferencesAreDecoded) {
  ExtractedPage p = Extract(
      "<p>&lt;a&gt; &amp;amp; &#65;&#x42;&#X43; caf&eacute; &copy 2024 "
      "&notin; &notit; &bogus; &#0; &#x110000; &#128; &hellip;&nbsp;x</p>");
  EXPECT_EQ(p.text,
            "<a> &amp; ABC café © 2024 ∉ ¬it; &bogus; \xEF\xBF\xBD "
            "\xEF\xBF\xBD € …\xC2\xA0x");
}

TEST(HtmlExtractTest, BlockElementsSeparateWordsInlineElementsDoNot) {
  ExtractedPage p = Extract(
      "<div>alpha</div><div>beta</div>gam<b>ma</b><span>del</span>ta"
      "<br>eps<li>zeta</li><td>eta</td><td>theta</td><h2>iota</h2>");
  EXPECT_EQ(p.text, "alpha\nbeta\ngammadelta\neps\nzeta\neta\ntheta\niota");
}

TEST(HtmlExtractTest, WhitespaceIsCollapsedAndTrimmed) {
  ExtractedPage p = Extract("  \n<p>  a \t\r\n b  </p>\n\n  c  ");
  EXPECT_EQ(p.text, "a b\nc");
}

TEST(HtmlExtractTest, TitleAndTextareaAreRcdata) {
  // HTML §13.2.5.2: tags inside <title>/<textarea> are text; refs decode.
  ExtractedPage p = Extract(
      "<title>A <b>&amp;</b>  B</title><textarea>x<y> &lt;</textarea>z");
  EXPECT_EQ(p.title, "A <b>&</b> B");
  EXPECT_EQ(p.text, "x<y> <\nz");
}

TEST(HtmlExtractTest, LinksAreResolvedAgainstThePageUrl) {
  ExtractedPage p = Extract(
      "<a href='other.html'>1</a><a href=\"/root?q=1&amp;r=2#frag\">2</a>"
      "<a href=../up/x.html>3</a><a href='//cdn.example.org/a'>4</a>"
      "<a href='HTTPS://Example.COM:443/%7euser'>5</a>");
  EXPECT_EQ(
      Urls(p),
      (std::vector<std::string>{
          "http://example.com/dir/other.html",
          "http://example.com/root?q=1&r=2", "http://example.com/up/x.html",
          "http://cdn.example.org/a", "https://example.com/~user"}));
  EXPECT_EQ(p.base_url, kUrl);
}

TEST(HtmlExtractTest, FirstBaseHrefAppliesToAllLinks) {
  // HTML §4.2.3: the first base element with href sets the document base
  // URL, also for links that precede it.
  ExtractedPage p = Extract(
      "<a href=early>0</a><base href='http://other.org/sub/'>"
      "<base href='http://ignored.net/'><a href=x>1</a><a href=/y>2</a>");
  EXPECT_EQ(Urls(p), (std::vector<std::string>{"http://other.org/sub/early",
                                               "http://other.org/sub/x",
                                               "http://other.org/y"}));
  EXPECT_EQ(p.base_url, "http://other.org/sub/");
}

TEST(HtmlExtractTest, RelativeBaseResolvesAgainstPageUrl) {
  ExtractedPage p = Extract("<base href='/b/'><a href=c>c</a>");
  EXPECT_EQ(Urls(p), std::vector<std::string>{"http://example.com/b/c"});
}

TEST(HtmlExtractTest, LinkKinds) {
  ExtractedPage p = Extract(
      "<link rel=stylesheet href=s.css><link rel='Alternate' href=alt>"
      "<link rel=next href=n><link rel=prev href=p>"
      "<link rel=canonical href='/canon'><map><area href=ar></map>"
      "<frameset><frame src=f1></frameset><iframe src=if>ignored "
      "<a href=no>text</a></iframe><a rel='nofollow ugc' href=nf>x</a>"
      "<img src=img.png><script src=s.js></script>");
  std::vector<std::pair<std::string, LinkKind>> got;
  for (const Link& l : p.links) got.emplace_back(l.url, l.kind);
  const std::string b = "http://example.com/";
  EXPECT_EQ(got, (std::vector<std::pair<std::string, LinkKind>>{
                     {b + "dir/alt", LinkKind::kAlternate},
                     {b + "dir/n", LinkKind::kAlternate},
                     {b + "dir/p", LinkKind::kAlternate},
                     {b + "canon", LinkKind::kCanonical},
                     {b + "dir/ar", LinkKind::kAnchor},
                     {b + "dir/f1", LinkKind::kFrame},
                     {b + "dir/if", LinkKind::kFrame},
                     {b + "dir/nf", LinkKind::kAnchor}}));
  EXPECT_TRUE(p.links.back().nofollow);
  EXPECT_FALSE(p.links.front().nofollow);
  EXPECT_EQ(p.canonical, b + "canon");
  EXPECT_EQ(p.text, "x");  // iframe content is raw text, not shown
}

// Feed discovery: <link rel=alternate> with an RSS or Atom type (any case,
// with parameters) is a kFeed link; other alternates stay kAlternate, and a
// page naming many feeds keeps max_feeds of them.
TEST(HtmlExtractTest, FeedLinksAreDiscoveredAndBounded) {
  ExtractedPage p = Extract(
      "<head><link rel=alternate type='application/rss+xml' title=RSS "
      "href=/feed/>"
      "<link rel='alternate' type=' Application/Atom+XML; charset=utf-8 ' "
      "href='atom.xml'>"
      "<link rel=alternate type=application/rss+xml href=/feed/>"
      "<link rel=alternate type=text/html hreflang=fr href=/fr/>"
      "<link rel=alternate type=application/json href=/feed.json>"
      "<link rel=stylesheet type=application/rss+xml href=/not-a-feed>"
      "</head><body><a href='/feed/'>feed as a page link</a></body>");
  std::vector<std::pair<std::string, LinkKind>> got;
  for (const Link& l : p.links) got.emplace_back(l.url, l.kind);
  const std::string b = "http://example.com/";
  EXPECT_EQ(got, (std::vector<std::pair<std::string, LinkKind>>{
                     {b + "feed/", LinkKind::kFeed},
                     {b + "dir/atom.xml", LinkKind::kFeed},
                     {b + "fr/", LinkKind::kAlternate},
                     {b + "feed.json", LinkKind::kAlternate},
                     {b + "feed/", LinkKind::kAnchor}}));
  EXPECT_STREQ(LinkKindName(LinkKind::kFeed), "feed");

  std::string many = "<head>";
  for (int i = 0; i < 50; ++i) {
    many += "<link rel=alternate type=application/atom+xml href=/f" +
            std::to_string(i) + ".xml>";
  }
  ExtractLimits limits;
  limits.max_feeds = 3;
  auto r = ExtractHtml(many + "</head><a href=/x>x</a>", "text/html",
                       "http://example.com/", limits);
  ASSERT_TRUE(r.ok());
  size_t feeds = 0;
  for (const Link& l : r->links) feeds += l.kind == LinkKind::kFeed;
  EXPECT_EQ(feeds, 3u);
  EXPECT_EQ(r->links.back().url, "http://example.com/x");
}

TEST(HtmlExtractTest, UselessAndDuplicateLinksAreDropped) {
  ExtractedPage p = Extract(
      "<a href='#top'>t</a><a href=''>e</a><a href='javascript:void(0)'>j</a>"
      "<a href='mailto:a@b.c'>m</a><a href=x#1>1</a><a href=x#2>2</a>"
      "<a href=' x '>3</a><a>no href</a><a href='http://[::1'>bad</a>");
  EXPECT_EQ(Urls(p), std::vector<std::string>{"http://example.com/dir/x"});
}

TEST(HtmlExtractTest, MetaRobots) {
  EXPECT_TRUE(Extract("<meta name=robots content=noindex>").noindex);
  EXPECT_FALSE(Extract("<meta name=robots content=noindex>").nofollow);
  ExtractedPage both =
      Extract("<META NAME=ROBOTS CONTENT='NoFollow, NOINDEX'>");
  EXPECT_TRUE(both.noindex && both.nofollow);
  ExtractedPage none = Extract("<meta name='robots' content='none'>");
  EXPECT_TRUE(none.noindex && none.nofollow);
  ExtractedPage other = Extract(
      "<meta name=googlebot content=noindex><meta name=description "
      "content=nofollow><meta name=robots content='index, follow, all'>");
  EXPECT_FALSE(other.noindex || other.nofollow);
}

TEST(HtmlExtractTest, XRobotsTag) {
  ExtractedPage p = Extract("<p>x", "text/html", kUrl, {}, "noindex");
  EXPECT_TRUE(p.noindex);
  EXPECT_FALSE(p.nofollow);
  EXPECT_TRUE(Extract("x", "text/html", kUrl, {}, "none").nofollow);
  ExtractedPage scoped = Extract("x", "text/html", kUrl, {},
                                 "unavailable_after: 2030-01-01, nofollow, "
                                 "otherbot: noindex");
  EXPECT_TRUE(scoped.nofollow);
  EXPECT_FALSE(scoped.noindex);
}

TEST(HtmlExtractTest, ParseRobotsDirectives) {
  EXPECT_TRUE(ParseRobotsDirectives("noarchive,noindex").noindex);
  EXPECT_FALSE(ParseRobotsDirectives("noarchive,noindex").nofollow);
  EXPECT_FALSE(ParseRobotsDirectives("googlebot: none").noindex);
  EXPECT_FALSE(ParseRobotsDirectives("").noindex);
}

TEST(HtmlExtractTest, CharsetFromContentTypeWindows1252) {
  ExtractedPage p = Extract("<p>caf\xE9 \x93quoted\x94 \x80 5",
                            "text/html; charset=ISO-8859-1");
  EXPECT_EQ(p.charset, "windows-1252");  // WHATWG: latin1 means windows-1252
  EXPECT_EQ(p.text, "café “quoted” € 5");
}

TEST(HtmlExtractTest, CharsetFromMetaCharset) {
  ExtractedPage p = Extract(
      "<html><head><meta charset='iso-8859-1'></head><body>na\xEFve</body>",
      "text/html");
  EXPECT_EQ(p.charset, "windows-1252");
  EXPECT_EQ(p.text, "naïve");
}

TEST(HtmlExtractTest, CharsetFromHttpEquivShiftJis) {
  // "日本語" in Shift_JIS: 93 FA 96 7B 8C EA.
  ExtractedPage p = Extract(
      "<meta http-equiv=\"Content-Type\" content=\"text/html; "
      "charset=Shift_JIS\"><p>\x93\xFA\x96\x7B\x8C\xEA</p>",
      "");
  EXPECT_EQ(p.charset, "shift_jis");
  EXPECT_EQ(p.text, "日本語");
}

TEST(HtmlExtractTest, ContentTypeWinsOverMetaAndBomWinsOverBoth) {
  ExtractedPage p = Extract("<meta charset=shift_jis>\xE9",
                            "text/html; charset=windows-1252");
  EXPECT_EQ(p.text, "é");
  ExtractedPage bom = Extract("\xEF\xBB\xBF<meta charset=latin1>caf\xC3\xA9",
                              "text/html; charset=windows-1252");
  EXPECT_EQ(bom.charset, "utf-8");
  EXPECT_EQ(bom.text, "café");
}

TEST(HtmlExtractTest, Utf16WithBom) {
  std::string body("\xFF\xFE", 2);
  for (char c : std::string("<p>hi</p>")) body += std::string{c, '\0'};
  ExtractedPage p = Extract(body, "text/html");
  EXPECT_EQ(p.charset, "utf-16le");
  EXPECT_EQ(p.text, "hi");
}

TEST(HtmlExtractTest, UndeclaredInvalidUtf8IsWindows1252) {
  ExtractedPage p = Extract("<p>d\xE9j\xE0 vu</p>", "text/html");
  EXPECT_EQ(p.charset, "windows-1252");
  EXPECT_EQ(p.text, "déjà vu");
}

TEST(HtmlExtractTest, InvalidUtf8InUtf8PageBecomesReplacementChar) {
  ExtractedPage p = Extract("<p>a\xFFz</p>", "text/html; charset=utf-8");
  EXPECT_EQ(p.charset, "utf-8");
  EXPECT_EQ(p.text, "a\xEF\xBF\xBDz");
}

TEST(HtmlExtractTest, LimitsTruncateOutput) {
  ExtractLimits limits;
  limits.max_text_bytes = 10;
  limits.max_links = 2;
  std::string html;
  for (int i = 0; i < 50; ++i)
    html += "<a href=p" + std::to_string(i) + ">wörd</a> ";
  ExtractedPage p = Extract(html, "text/html", kUrl, limits);
  EXPECT_TRUE(p.truncated);
  EXPECT_LE(p.text.size(), 11u);
  EXPECT_EQ(p.text.rfind("wörd", 0), 0u);  // cut on a code point boundary
  EXPECT_EQ(p.links.size(), 2u);

  ExtractLimits input;
  input.max_input_bytes = 8;
  ExtractedPage q = Extract("<p>abcdefghij</p>", "text/html", kUrl, input);
  EXPECT_TRUE(q.truncated);
  EXPECT_EQ(q.text, "abcde");
  // A UTF-8 sequence cut by the limit does not make the page windows-1252.
  input.max_input_bytes = 12;  // cuts \xC3\xA0 after \xC3
  ExtractedPage r =
      Extract("<p>abc d\xC3\xA9j\xC3\xA0", "text/html", kUrl, input);
  EXPECT_EQ(r.charset, "utf-8");
  EXPECT_EQ(r.text, "abc déj");
}

TEST(HtmlExtractTest, MalformedMarkupYieldsWhatABrowserShows) {
  EXPECT_EQ(Extract("a < b and c<d").text, "a < b and c");  // <d is a tag
  EXPECT_EQ(Extract("x <3 y").text, "x <3 y");
  EXPECT_EQ(Extract("x</ y>z").text, "xz");  // bogus comment
  EXPECT_EQ(Extract("a<!-->b<!--->c<!-- x --!>d").text, "abcd");
  EXPECT_EQ(Extract("a<!-- never closed <p>b").text, "a");
  EXPECT_EQ(Extract("a<p class='unterminated>b").text, "a");  // EOF in tag
  EXPECT_EQ(Extract("a<script>b").text, "a");
  EXPECT_EQ(Extract("<p a=1 a=2 / b c='>'>t</p>").text, "t");
  EXPECT_EQ(Extract("a<?php echo 1 ?>b<!DOCTYPE html>c").text, "abc");
  EXPECT_EQ(Extract("<plaintext><b>&amp;</b>").text, "<b>&</b>");
}

TEST(HtmlExtractTest, BadPageUrlIsAnError) {
  Result<ExtractedPage> bad = ExtractHtml("<p>x", "text/html", "not a url");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
  // Without a URL only absolute links survive.
  ExtractedPage p = Extract("<a href=rel>r</a><a href='https://x.org/'>a</a>",
                            "text/html", "");
  EXPECT_EQ(Urls(p), std::vector<std::string>{"https://x.org/"});
}

}  // namespace
}  // namespace freshd::parse

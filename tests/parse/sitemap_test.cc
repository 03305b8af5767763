// Tests of parse/sitemap and parse/w3c_datetime: formats (sitemaps.org
// protocol, RSS 2.0, Atom), gzip by magic bytes, limits, the host rule and
// XML safety against the hostile corpus in tests/data/hostile-xml-html.
// The crawler-commons fixtures run in sitemap_conformance_test.cc.

#include "parse/sitemap.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/iso8601.h"
#include "parse/w3c_datetime.h"

namespace freshd::parse {
namespace {

std::string Gzip(std::string_view in) {
  z_stream zs{};
  EXPECT_EQ(
      deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY),
      Z_OK);
  std::string out(deflateBound(&zs, in.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t Utc(std::string_view iso) { return *ParseW3cDatetime(iso); }

const char kUrlset[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" "
    "xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\">\n"
    " <url><loc>http://www.example.com/</loc>"
    "<lastmod>2005-01-01</lastmod><changefreq>monthly</changefreq></url>\n"
    " <url><loc> http://www.example.com/a?x=1&amp;y=2 </loc>"
    "<image:image><image:loc>http://img.example.net/i.png</image:loc>"
    "</image:image><lastmod>2004-12-23T18:00:15+01:00</lastmod></url>\n"
    " <url><loc>http://www.example.com/b</loc><lastmod>yesterday</lastmod>"
    "</url>\n"
    "</urlset>\n";

TEST(SitemapTest, UrlsetWithLastmodForms) {
  auto r = ParseSitemap(kUrlset, SitemapOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->status.ok());
  EXPECT_EQ(r->format, SitemapFormat::kUrlset);
  ASSERT_EQ(r->entries.size(), 3u);
  EXPECT_EQ(r->entries[0].loc, "http://www.example.com/");
  EXPECT_EQ(r->entries[0].lastmod, Utc("2005-01-01T00:00:00Z"));
  EXPECT_EQ(r->entries[1].loc, "http://www.example.com/a?x=1&y=2");
  EXPECT_EQ(r->entries[1].lastmod, Utc("2004-12-23T17:00:15Z"));
  EXPECT_EQ(r->entries[2].lastmod, std::nullopt);  // invalid date -> null
  for (const auto& e : r->entries) EXPECT_EQ(e.kind, SitemapEntry::Kind::kUrl);
}

TEST(SitemapTest, SitemapIndexWithoutNamespace) {
  auto r = ParseSitemap(
      "<sitemapindex><sitemap><loc>https://h.example/s1.xml.gz</loc>"
      "<lastmod>2024-02-29T23:59:59Z</lastmod></sitemap>"
      "<sitemap><loc>https://h.example/s2.xml</loc></sitemap></sitemapindex>",
      SitemapOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->format, SitemapFormat::kSitemapIndex);
  ASSERT_EQ(r->entries.size(), 2u);
  EXPECT_EQ(r->entries[0].kind, SitemapEntry::Kind::kSitemap);
  EXPECT_EQ(r->entries[0].lastmod, Utc("2024-02-29T23:59:59Z"));
}

TEST(SitemapTest, PlainTextWithBomBlanksAndJunk) {
  SitemapOptions o;
  o.sitemap_url = "http://www.example.com/sitemap.txt";
  auto r = ParseSitemap(
      "\xEF\xBB\xBF  \nhttp://www.example.com/1\r\n\n  "
      "http://www.example.com/2  \nnot a url\n/relative\n",
      o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->format, SitemapFormat::kText);
  ASSERT_EQ(r->entries.size(), 2u);
  EXPECT_EQ(r->entries[1].loc, "http://www.example.com/2");
  EXPECT_EQ(r->dropped_invalid, 2u);  // text sitemaps need full URLs
}

TEST(SitemapTest, GzipDetectedByMagicBytes) {
  auto r = ParseSitemap(Gzip(kUrlset), SitemapOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->entries.size(), 3u);
  auto t = ParseSitemap(Gzip("http://a.example/x\nhttp://a.example/y\n"),
                        SitemapOptions{});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->format, SitemapFormat::kText);
  EXPECT_EQ(t->entries.size(), 2u);
}

TEST(SitemapTest, TruncatedGzipYieldsWhatWasReadPlusError) {
  std::string doc = "<urlset>";
  for (int i = 0; i < 2000; ++i)
    doc += "<url><loc>http://a.example/p" + std::to_string(i) + "</loc></url>";
  doc += "</urlset>";
  std::string gz = Gzip(doc);
  auto r = ParseSitemap(std::string_view(gz).substr(0, gz.size() / 2),
                        SitemapOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->status.ok());
  EXPECT_GT(r->entries.size(), 100u);
  EXPECT_LT(r->entries.size(), 2000u);
}

TEST(SitemapTest, TruncatedXmlKeepsOnlyClosedLocs) {
  auto r = ParseSitemap(
      "<urlset><url><loc>http://a.example/1</loc></url>"
      "<url><loc>http://a.example/2</loc><lastmod>2020",
      SitemapOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status.code(), Status::Code::kCorruption);
  ASSERT_EQ(r->entries.size(), 2u);
  auto cut =
      ParseSitemap("<urlset><url><loc>http://a.example/lo", SitemapOptions{});
  ASSERT_TRUE(cut.ok());
  EXPECT_TRUE(cut->entries.empty());  // "lo" may be a cut URL
  EXPECT_FALSE(cut->status.ok());
}

TEST(SitemapTest, UrlLimitStopsWithResourceExhausted) {
  std::string text;
  for (int i = 0; i < 100; ++i)
    text += "http://a.example/" + std::to_string(i) + "\n";
  SitemapOptions o;
  o.max_urls = 10;
  auto r = ParseSitemap(text, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->entries.size(), 10u);
  EXPECT_EQ(r->status.code(), Status::Code::kResourceExhausted);
  auto x = ParseSitemap(kUrlset, o);
  ASSERT_TRUE(x.ok());
  EXPECT_TRUE(x->status.ok());  // 3 <= 10
}

TEST(SitemapTest, ByteLimitAppliesToDecompressedSize) {
  // A gzip bomb: 16 MiB of blanks after a root element, ~16 KiB packed.
  std::string bomb = "<urlset><url><loc>http://a.example/</loc></url>";
  bomb += std::string(16 << 20, ' ');
  std::string gz = Gzip(bomb);
  EXPECT_LT(gz.size(), 1u << 20);
  SitemapOptions o;
  o.max_bytes = 1 << 20;
  auto start = std::chrono::steady_clock::now();
  auto r = ParseSitemap(gz, o);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - start)
                .count();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status.code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(r->entries.size(), 1u);
  EXPECT_LT(ms, 5000);
}

TEST(SitemapTest, HostRuleAndRelativeLocs) {
  const char* doc =
      "<urlset><url><loc>/rel</loc></url>"
      "<url><loc>http://www.example.com/same</loc></url>"
      "<url><loc>http://other.example/x</loc></url></urlset>";
  SitemapOptions o;
  o.sitemap_url = "http://www.example.com/maps/sitemap.xml";
  auto r = ParseSitemap(doc, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->entries.size(), 2u);
  EXPECT_EQ(r->entries[0].loc, "http://www.example.com/rel");
  EXPECT_EQ(r->dropped_cross_host, 1u);

  o.cross_host_allowed = [](std::string_view host) {
    return host == "other.example";
  };
  r = ParseSitemap(doc, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->entries.size(), 3u);

  o.require_same_path_prefix = true;
  r = ParseSitemap(doc, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->entries.size(), 0u);
  EXPECT_EQ(r->dropped_outside_path, 3u);

  auto no_base = ParseSitemap(doc, SitemapOptions{});
  ASSERT_TRUE(no_base.ok());
  EXPECT_EQ(no_base->entries.size(), 2u);  // nothing dropped but "/rel"
  EXPECT_EQ(no_base->dropped_invalid, 1u);

  SitemapOptions bad;
  bad.sitemap_url = "ftp://x/";
  EXPECT_FALSE(ParseSitemap(doc, bad).ok());
}

TEST(SitemapTest, Rss2AndAtomFeeds) {
  auto rss = ParseSitemap(
      "<rss version=\"2.0\"><channel><link>http://f.example/</link>"
      "<pubDate>Thu, 05 Jan 2017 12:34:50 GMT</pubDate>"
      "<item><link>http://f.example/1</link>"
      "<pubDate>Thu, 05 Jan 2017 13:34:51 +0100</pubDate></item>"
      "<item><guid>http://f.example/2</guid><pubDate>bad</pubDate></item>"
      "</channel></rss>",
      SitemapOptions{});
  ASSERT_TRUE(rss.ok());
  EXPECT_EQ(rss->format, SitemapFormat::kRss);
  ASSERT_EQ(rss->entries.size(), 2u);  // the channel link is not an entry
  EXPECT_EQ(rss->entries[0].lastmod, Utc("2017-01-05T12:34:51Z"));
  EXPECT_EQ(rss->entries[1].loc, "http://f.example/2");
  EXPECT_EQ(rss->entries[1].lastmod, std::nullopt);

  auto atom = ParseSitemap(
      "<feed xmlns=\"http://www.w3.org/2005/Atom\">"
      "<link href=\"http://f.example/\"/>"
      "<entry><link rel=\"edit\" href=\"http://f.example/e\"/>"
      "<link rel=\"alternate\" href=\"http://f.example/a\"/>"
      "<updated>2003-12-13T18:30:02.25+01:00</updated></entry></feed>",
      SitemapOptions{});
  ASSERT_TRUE(atom.ok());
  EXPECT_EQ(atom->format, SitemapFormat::kAtom);
  ASSERT_EQ(atom->entries.size(), 1u);
  EXPECT_EQ(atom->entries[0].loc, "http://f.example/a");
  EXPECT_EQ(atom->entries[0].lastmod, Utc("2003-12-13T17:30:02Z"));
}

TEST(SitemapTest, NotASitemap) {
  for (std::string bad :
       {std::string(""), std::string("   \n"),
        std::string("<html><body>hi</body></html>"),
        std::string("hello world\n"), std::string("\x01\x02\x00\x03", 4)}) {
    auto r = ParseSitemap(bad, SitemapOptions{});
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    }
  }
}

// Entity bombs and external entities: every DOCTYPE is refused before its
// internal subset is read, and nothing external is ever fetched or read.
TEST(SitemapSafetyTest, DoctypesAreRefused) {
  const char* kLaughs =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE urlset [\n"
      "<!ENTITY a \"aaaaaaaaaa\">\n<!ENTITY b "
      "\"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
      "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n"
      "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n"
      "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">\n"
      "<!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">\n"
      "<!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">\n]>\n"
      "<urlset><url><loc>http://a.example/&g;</loc></url></urlset>";
  auto r = ParseSitemap(kLaughs, SitemapOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("DOCTYPE"), std::string::npos);
  auto xxe = ParseSitemap(
      "<!DOCTYPE urlset [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
      "<urlset><url><loc>&x;</loc></url></urlset>",
      SitemapOptions{});
  EXPECT_FALSE(xxe.ok());
  // An undeclared entity is a well-formedness error, not an expansion.
  auto undeclared = ParseSitemap(
      "<urlset><url><loc>http://a.example/1</loc></url>"
      "<url><loc>&nope;</loc></url></urlset>",
      SitemapOptions{});
  ASSERT_TRUE(undeclared.ok());
  EXPECT_FALSE(undeclared->status.ok());
  EXPECT_EQ(undeclared->entries.size(), 1u);
}

// Every file of the hostile corpus, as is and under a sitemap root: no
// crash, a bounded time, and no URL from an external resource.
TEST(SitemapSafetyTest, HostileCorpusIsHandled) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(FRESHD_TEST_DATA_DIR) / "hostile-xml-html";
  ASSERT_TRUE(fs::exists(dir));
  int files = 0;
  auto start = std::chrono::steady_clock::now();
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    if (entry.path().filename().string().starts_with("LICENSE")) continue;
    std::string bytes = ReadFile(entry.path());
    ++files;
    for (const std::string& input :
         {bytes, "<urlset><url><loc>http://a.example/</loc></url>" + bytes +
                     "</urlset>"}) {
      auto t0 = std::chrono::steady_clock::now();
      auto r = ParseSitemap(input, SitemapOptions{});
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
      EXPECT_LT(ms, 2000) << entry.path();
      if (r.ok()) {
        EXPECT_LE(r->entries.size(), 50000u);
        for (const auto& e : r->entries) {
          EXPECT_EQ(e.loc.find("passwd"), std::string::npos) << entry.path();
        }
      }
    }
  }
  auto total = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count();
  std::printf("hostile corpus: %d files in %lld ms\n", files,
              static_cast<long long>(total));
  EXPECT_GT(files, 80);
}

TEST(W3cDatetimeTest, AllProfileForms) {
  EXPECT_EQ(ParseW3cDatetime("1997"), Utc("1997-01-01T00:00:00Z"));
  EXPECT_EQ(ParseW3cDatetime("1997-07"), Utc("1997-07-01T00:00:00Z"));
  EXPECT_EQ(ParseW3cDatetime("1997-07-16"), Utc("1997-07-16T00:00:00Z"));
  EXPECT_EQ(ParseW3cDatetime("1997-07-16T19:20+01:00"),
            Utc("1997-07-16T18:20:00Z"));
  EXPECT_EQ(ParseW3cDatetime("1997-07-16T19:20:30+01:00"),
            Utc("1997-07-16T18:20:30Z"));
  EXPECT_EQ(ParseW3cDatetime("1997-07-16T19:20:30.45+01:00"),
            Utc("1997-07-16T18:20:30Z"));
  EXPECT_EQ(ParseW3cDatetime(" 1997-07-16T19:20:30.45-0130 "),
            Utc("1997-07-16T20:50:30Z"));
  EXPECT_EQ(ParseW3cDatetime("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseW3cDatetime("2000-02-29"), Utc("2000-02-29T00:00:00Z"));
  EXPECT_EQ(FormatIso8601Utc(951782400), "2000-02-29T00:00:00Z");
  EXPECT_EQ(FormatIso8601Utc(-1), "1969-12-31T23:59:59Z");
}

TEST(W3cDatetimeTest, InvalidDatesAreNull) {
  for (const char* bad :
       {"", "blah", "97-07-16", "1997-7-16", "1997-13-01", "1900-02-29",
        "2014-02-30", "1997-07-16T25:00Z", "1997-07-16T19:60Z",
        "1997-07-16T19:20:30.+01:00", "1997-07-16T19:20+24:00", "1997-07-16T19",
        "1997-07-16T19:20Zjunk", "0000-01-01"}) {
    EXPECT_FALSE(ParseW3cDatetime(bad).has_value()) << bad;
  }
}

TEST(W3cDatetimeTest, Rfc822Dates) {
  EXPECT_EQ(ParseRfc822Date("Sun, 06 Sep 2009 16:20:00 +0000"),
            Utc("2009-09-06T16:20:00Z"));
  EXPECT_EQ(ParseRfc822Date("6 sep 09 16:20 EDT"), Utc("2009-09-06T20:20:00Z"));
  EXPECT_EQ(ParseRfc822Date("06 Sep 1999 16:20:00 PST"),
            Utc("1999-09-07T00:20:00Z"));
  EXPECT_FALSE(ParseRfc822Date("05 Jan 17 13:34:55").has_value());  // no zone
  EXPECT_FALSE(ParseRfc822Date("31 Feb 2017 00:00:00 GMT").has_value());
  EXPECT_FALSE(ParseRfc822Date("05 Foo 2017 00:00:00 GMT").has_value());
  EXPECT_FALSE(ParseRfc822Date("05 Jan 2017 00:00:00 A").has_value());
}

}  // namespace
}  // namespace freshd::parse

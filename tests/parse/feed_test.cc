// Tests of parse/feed: RSS 2.0, RSS 1.0 (RDF) and Atom 1.0 feeds shaped like
// real ones (blog platforms, news sites), relative links, the date fields
// and their fallbacks, bounds (bytes, entries, URL length), and clear
// errors for what is not a feed (a sitemap, HTML, a DOCTYPE). The
// crawler-commons feed fixtures under tests/data are read too.

#include "parse/feed.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "parse/url.h"
#include "parse/w3c_datetime.h"

namespace freshd::parse {
namespace {

namespace fs = std::filesystem;

int64_t Utc(std::string_view iso) { return *ParseW3cDatetime(iso); }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

FeedOptions At(std::string url) {
  FeedOptions o;
  o.feed_url = std::move(url);
  return o;
}

// A WordPress-style RSS 2.0 feed: namespaces, CDATA, a guid that is not a
// permalink, relative and absolute links, several date zone forms.
const char kWordPressRss[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<rss version=\"2.0\" xmlns:content=\"http://purl.org/rss/1.0/modules/"
    "content/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\" "
    "xmlns:atom=\"http://www.w3.org/2005/Atom\">\n"
    "<channel>\n"
    " <title>Blog</title>\n"
    " <atom:link href=\"https://blog.example.com/feed/\" rel=\"self\" "
    "type=\"application/rss+xml\" />\n"
    " <link>https://blog.example.com</link>\n"
    " <lastBuildDate>Tue, 24 Nov 2026 09:00:00 +0000</lastBuildDate>\n"
    " <item>\n"
    "  <title><![CDATA[Hello & welcome]]></title>\n"
    "  <link>https://blog.example.com/2026/11/hello/</link>\n"
    "  <dc:creator><![CDATA[admin]]></dc:creator>\n"
    "  <pubDate>Tue, 24 Nov 2026 08:30:00 +0000</pubDate>\n"
    "  <guid isPermaLink=\"false\">https://blog.example.com/?p=42</guid>\n"
    "  <content:encoded><![CDATA[<p>Hi <a href=\"/x\">x</a></p>]]>"
    "</content:encoded>\n"
    " </item>\n"
    " <item>\n"
    "  <title>Relative</title>\n"
    "  <link>/2026/11/relative/?a=1&amp;b=2</link>\n"
    "  <pubDate>Mon, 23 Nov 2026 10:00:00 GMT</pubDate>\n"
    " </item>\n"
    " <item>\n"
    "  <title>US zone</title>\n"
    "  <link>https://blog.example.com/us</link>\n"
    "  <pubDate>Sun, 22 Nov 2026 07:00:00 EST</pubDate>\n"
    " </item>\n"
    " <item>\n"
    "  <title>No date, guid only</title>\n"
    "  <guid>https://blog.example.com/guid-only</guid>\n"
    " </item>\n"
    " <item>\n"
    "  <title>Bad date</title>\n"
    "  <link>https://blog.example.com/bad-date</link>\n"
    "  <pubDate>last Tuesday</pubDate>\n"
    " </item>\n"
    "</channel>\n"
    "</rss>\n";

TEST(FeedTest, Rss2EntriesDatesAndRelativeLinks) {
  auto r = ParseFeed(kWordPressRss, At("https://blog.example.com/feed/"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->status.ok()) << r->status.ToString();
  EXPECT_EQ(r->format, FeedFormat::kRss);
  EXPECT_STREQ(FeedFormatName(r->format), "rss");
  ASSERT_EQ(r->entries.size(), 5u);  // the channel <link> is not an entry
  EXPECT_EQ(r->entries[0].url, "https://blog.example.com/2026/11/hello/");
  EXPECT_EQ(r->entries[0].updated, Utc("2026-11-24T08:30:00Z"));
  EXPECT_EQ(r->entries[1].url,
            "https://blog.example.com/2026/11/relative/?a=1&b=2");
  EXPECT_EQ(r->entries[1].updated, Utc("2026-11-23T10:00:00Z"));
  EXPECT_EQ(r->entries[2].updated, Utc("2026-11-22T12:00:00Z"));  // EST -5
  EXPECT_EQ(r->entries[3].url, "https://blog.example.com/guid-only");
  EXPECT_EQ(r->entries[3].updated, std::nullopt);
  EXPECT_EQ(r->entries[4].updated, std::nullopt);  // unparsable: no date
  EXPECT_EQ(r->newest(), Utc("2026-11-24T08:30:00Z"));
}

// A Blogger/GitHub-style Atom feed: the entry's page is the link with no
// rel or rel="alternate" (not self, edit, replies, enclosure); <updated>
// wins over <published>, which is used when <updated> is missing.
const char kAtom[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:lang=\"en\">\n"
    " <title>News</title>\n"
    " <link href=\"https://news.example.org/atom.xml\" rel=\"self\"/>\n"
    " <link href=\"https://news.example.org/\"/>\n"
    " <updated>2026-11-25T10:00:00Z</updated>\n"
    " <id>tag:news.example.org,2026:feed</id>\n"
    " <entry>\n"
    "  <title>One</title>\n"
    "  <link rel=\"edit\" href=\"https://news.example.org/edit/1\"/>\n"
    "  <link rel=\"replies\" type=\"application/atom+xml\" "
    "href=\"https://news.example.org/1/comments.xml\"/>\n"
    "  <link rel=\"alternate\" type=\"text/html\" href=\"/posts/one\"/>\n"
    "  <id>tag:news.example.org,2026:1</id>\n"
    "  <published>2026-11-20T09:00:00+01:00</published>\n"
    "  <updated>2026-11-25T09:59:00+01:00</updated>\n"
    " </entry>\n"
    " <entry>\n"
    "  <title>Two</title>\n"
    "  <link href=\"posts/two.html\"/>\n"
    "  <published>2026-11-21T12:00:00Z</published>\n"
    " </entry>\n"
    " <entry>\n"
    "  <title>Self only</title>\n"
    "  <link rel=\"self\" href=\"https://news.example.org/self/3\"/>\n"
    "  <updated>2026-11-22T12:00:00Z</updated>\n"
    " </entry>\n"
    "</feed>\n";

TEST(FeedTest, AtomLinksAndUpdatedThenPublished) {
  auto r = ParseFeed(kAtom, At("https://news.example.org/feeds/atom.xml"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->status.ok());
  EXPECT_EQ(r->format, FeedFormat::kAtom);
  ASSERT_EQ(r->entries.size(), 2u);  // an entry with no page link is skipped
  EXPECT_EQ(r->entries[0].url, "https://news.example.org/posts/one");
  EXPECT_EQ(r->entries[0].updated, Utc("2026-11-25T08:59:00Z"));
  EXPECT_EQ(r->entries[1].url, "https://news.example.org/feeds/posts/two.html");
  EXPECT_EQ(r->entries[1].updated, Utc("2026-11-21T12:00:00Z"));
}

TEST(FeedTest, Rss1RdfAboutAndDcDate) {
  const char rdf[] =
      "<?xml version=\"1.0\"?>\n"
      "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" "
      "xmlns=\"http://purl.org/rss/1.0/\" "
      "xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n"
      " <channel rdf:about=\"http://slash.example.com/\">\n"
      "  <title>Slash</title><link>http://slash.example.com/</link>\n"
      "  <items><rdf:Seq><rdf:li rdf:resource=\"http://slash.example.com/a\"/>"
      "</rdf:Seq></items>\n"
      " </channel>\n"
      " <item rdf:about=\"http://slash.example.com/a\">\n"
      "  <title>A</title><dc:date>2026-11-24T08:00:00+00:00</dc:date>\n"
      " </item>\n"
      " <item rdf:about=\"http://slash.example.com/ignored\">\n"
      "  <link>http://slash.example.com/b</link>\n"
      "  <dc:date>2026-11-23</dc:date>\n"
      " </item>\n"
      "</rdf:RDF>\n";
  auto r = ParseFeed(rdf, At("http://slash.example.com/index.rdf"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->format, FeedFormat::kRss);
  ASSERT_EQ(r->entries.size(), 2u);
  EXPECT_EQ(r->entries[0].url, "http://slash.example.com/a");
  EXPECT_EQ(r->entries[0].updated, Utc("2026-11-24T08:00:00Z"));
  EXPECT_EQ(r->entries[1].url, "http://slash.example.com/b");  // link wins
  EXPECT_EQ(r->entries[1].updated, Utc("2026-11-23T00:00:00Z"));
}

TEST(FeedTest, CrawlerCommonsFixtures) {
  const fs::path dir =
      fs::path(FRESHD_TEST_DATA_DIR) / "crawler-commons" / "sitemaps";
  auto rss = ParseFeed(ReadFile(dir / "rss" / "feed.rss"),
                       At("https://www.example.com/feed.rss"));
  ASSERT_TRUE(rss.ok()) << rss.status().ToString();
  ASSERT_EQ(rss->entries.size(), 4u);
  EXPECT_EQ(rss->entries[0].updated, Utc("2009-09-06T16:20:00Z"));
  EXPECT_EQ(rss->entries[1].url, "https://www.example.com/guid.html");
  EXPECT_EQ(rss->entries[3].url, "https://www.example.com/foo?q=a&l=fr");

  auto dated = ParseFeed(ReadFile(dir / "rss" / "xmlRss_pubDate.xml"),
                         At("http://www.example.com/rss.xml"));
  ASSERT_TRUE(dated.ok());
  ASSERT_GE(dated->entries.size(), 2u);
  EXPECT_EQ(dated->entries[0].updated, Utc("2017-01-05T12:34:51Z"));

  auto atom = ParseFeed(ReadFile(dir / "sitemaps" / "atom.xml"),
                        At("http://example.org/feed/"));
  ASSERT_TRUE(atom.ok());
  ASSERT_EQ(atom->entries.size(), 1u);
  EXPECT_EQ(atom->entries[0].url, "http://example.org/2003/12/13/atom03");

  auto rdf = ParseFeed(ReadFile(dir / "inline" / "rss10-rdf.xml"),
                       At("http://www.example.com/pub/news.rss"));
  ASSERT_TRUE(rdf.ok());
  ASSERT_EQ(rdf->entries.size(), 1u);
  EXPECT_EQ(rdf->entries[0].url,
            "http://www.example.com/pub/2000/08/09/xslt/xslt.html");
}

TEST(FeedTest, NotAFeedIsAClearError) {
  const char urlset[] =
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
      "<url><loc>http://a.example/</loc></url></urlset>";
  auto s = ParseFeed(urlset, At("http://a.example/feed"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("not a feed"), std::string::npos)
      << s.status().message();

  auto html = ParseFeed("<!doctype html><html><body>hi</body></html>",
                        At("http://a.example/feed"));
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.status().code(), Status::Code::kInvalidArgument);

  auto text = ParseFeed("http://a.example/1\nhttp://a.example/2\n",
                        At("http://a.example/feed"));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("not a feed"), std::string::npos);

  auto binary = ParseFeed(std::string("\x00\x01\x02\xff", 4),
                          At("http://a.example/feed"));
  EXPECT_FALSE(binary.ok());

  auto bad_base = ParseFeed(kAtom, At("ftp://a.example/feed"));
  ASSERT_FALSE(bad_base.ok());
  EXPECT_EQ(bad_base.status().code(), Status::Code::kInvalidArgument);
}

TEST(FeedTest, RefusesDoctypeSoNoXxe) {
  const char xxe[] =
      "<?xml version=\"1.0\"?>\n"
      "<!DOCTYPE rss [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n"
      "<rss version=\"2.0\"><channel><item><link>http://a.example/&x;</link>"
      "</item></channel></rss>";
  auto r = ParseFeed(xxe, At("http://a.example/feed"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("DOCTYPE"), std::string::npos);
}

std::string ManyItems(int n) {
  std::string xml = "<rss version=\"2.0\"><channel>";
  for (int i = 0; i < n; ++i) {
    xml += "<item><link>http://a.example/p" + std::to_string(i) +
           "</link><pubDate>Tue, 24 Nov 2026 08:30:00 +0000</pubDate></item>";
  }
  return xml + "</channel></rss>";
}

TEST(FeedTest, BoundsOnEntriesBytesAndUrlLength) {
  FeedOptions o = At("http://a.example/feed");
  o.max_entries = 10;
  auto many = ParseFeed(ManyItems(50), o);
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->entries.size(), 10u);
  EXPECT_EQ(many->status.code(), Status::Code::kResourceExhausted);

  o.max_entries = 1000;
  o.max_bytes = 1000;  // cuts the document: what came before is kept
  auto cut = ParseFeed(ManyItems(50), o);
  ASSERT_TRUE(cut.ok());
  EXPECT_FALSE(cut->status.ok());
  EXPECT_GT(cut->entries.size(), 0u);
  EXPECT_LT(cut->entries.size(), 50u);

  std::string long_link = "<rss><channel><item><link>http://a.example/" +
                          std::string(kMaxUrlLength + 10, 'x') +
                          "</link></item><item><link>http://a.example/ok"
                          "</link></item></channel></rss>";
  auto longr = ParseFeed(long_link, At("http://a.example/feed"));
  ASSERT_TRUE(longr.ok());
  ASSERT_EQ(longr->entries.size(), 1u);
  EXPECT_EQ(longr->entries[0].url, "http://a.example/ok");
  EXPECT_EQ(longr->dropped_invalid, 1u);
}

TEST(FeedTest, TruncationAndCrossHost) {
  // Cut inside the second item: the first is kept, the status says why.
  std::string cut = ManyItems(3);
  cut.resize(cut.find("/p1") + 2);
  auto c = ParseFeed(cut, At("http://a.example/feed"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->status.code(), Status::Code::kCorruption);
  ASSERT_EQ(c->entries.size(), 1u);
  EXPECT_EQ(c->entries[0].url, "http://a.example/p0");

  const char cross[] =
      "<rss><channel><item><link>http://other.example/x</link></item>"
      "<item><link>http://a.example/y</link></item></channel></rss>";
  auto x = ParseFeed(cross, At("http://a.example/feed"));
  ASSERT_TRUE(x.ok());
  ASSERT_EQ(x->entries.size(), 1u);
  EXPECT_EQ(x->dropped_cross_host, 1u);
  FeedOptions allow = At("http://a.example/feed");
  allow.cross_host_allowed = [](std::string_view h) {
    return h == "other.example";
  };
  auto y = ParseFeed(cross, allow);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->entries.size(), 2u);
}

}  // namespace
}  // namespace freshd::parse

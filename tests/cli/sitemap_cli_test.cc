// End-to-end tests of `freshd sitemap` (contract in docs/DESIGN.md):
// JSON Lines on stdout, exit 0 / 2, partial output for cut files.

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_command.h"

namespace freshd::testing {
namespace {

std::vector<nlohmann::json> JsonLines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(SitemapCliTest, UrlsetToJsonLines) {
  std::string path = WriteTempFile(
      "<?xml version=\"1.0\"?>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
      "<url><loc>http://www.example.com/a</loc>"
      "<lastmod>2004-12-23T18:00:15+01:00</lastmod></url>"
      "<url><loc>/relative</loc></url>"
      "<url><loc>http://elsewhere.example/x</loc></url></urlset>",
      ".xml");
  CommandResult r = RunFreshd(
      {"sitemap", "--url", "http://www.example.com/sitemap.xml", path});
  CommandResult no_url = RunFreshd({"sitemap", path});
  std::remove(path.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0]["loc"], "http://www.example.com/a");
  EXPECT_EQ(lines[0]["lastmod"], "2004-12-23T17:00:15Z");
  EXPECT_EQ(lines[0]["kind"], "url");
  EXPECT_EQ(lines[1]["loc"], "http://www.example.com/relative");
  EXPECT_TRUE(lines[1]["lastmod"].is_null());
  // Key order as in the contract: loc, lastmod, kind.
  EXPECT_EQ(r.out.find("{\"loc\":"), 0u);
  EXPECT_NE(r.err.find("1 other-host"), std::string::npos) << r.err;
  // Without --url nothing is dropped by the host rule.
  EXPECT_EQ(no_url.exit_code, 0);
  EXPECT_EQ(JsonLines(no_url.out).size(), 2u);  // "/relative" cannot resolve
}

TEST(SitemapCliTest, SitemapIndexKinds) {
  std::string path = WriteTempFile(
      "<sitemapindex><sitemap><loc>http://a.example/s1.xml</loc></sitemap>"
      "</sitemapindex>",
      ".xml");
  CommandResult r = RunFreshd({"sitemap", path});
  std::remove(path.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["kind"], "sitemap");
}

TEST(SitemapCliTest, TruncatedFilePrintsWhatWasReadAndExitsTwo) {
  std::string path = WriteTempFile(
      "<urlset><url><loc>http://a.example/1</loc></url><url><loc>http://a.ex",
      ".xml");
  CommandResult r = RunFreshd({"sitemap", path});
  std::remove(path.c_str());
  EXPECT_EQ(r.exit_code, 2);
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["loc"], "http://a.example/1");
  EXPECT_NE(r.err.find("stopped after 1 entries"), std::string::npos) << r.err;
}

TEST(SitemapCliTest, CrawlerCommonsGzipFixture) {
  CommandResult r =
      RunFreshd({"sitemap", "--url", "http://www.example.com/sitemap.xml.gz",
                 std::string(FRESHD_TEST_DATA_DIR) +
                     "/crawler-commons/sitemaps/sitemaps/xmlSitemap.gz"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(JsonLines(r.out).size(), 5u);
}

TEST(SitemapCliTest, NotASitemapOrUnreadableExitsTwo) {
  std::string path = WriteTempFile("<html><body>no</body></html>", ".xml");
  CommandResult html = RunFreshd({"sitemap", path});
  std::remove(path.c_str());
  EXPECT_EQ(html.exit_code, 2);
  EXPECT_TRUE(html.out.empty());
  EXPECT_NE(html.err.find("not a sitemap"), std::string::npos) << html.err;
  CommandResult missing = RunFreshd({"sitemap", "/nonexistent/s.xml"});
  EXPECT_EQ(missing.exit_code, 2);
}

}  // namespace
}  // namespace freshd::testing

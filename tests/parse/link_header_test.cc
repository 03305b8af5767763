// Tests of parse/link_header (RFC 8288 Link fields as WebSub discovery
// reads them) and of the feed's hub and self links (parse/feed.h): the
// forms hubs and blog platforms send, several values and rels, quoting,
// junk, bounds; Link headers taking precedence over the body (WebSub §4).

#include "parse/link_header.h"

#include <gtest/gtest.h>

#include <string>

#include "parse/feed.h"
#include "parse/sitemap.h"

namespace freshd::parse {
namespace {

TEST(LinkHeaderTest, HubAndSelfAsWordPressSendsThem) {
  auto links = ParseLinkHeader(
      "<https://pubsubhubbub.appspot.com>; rel=\"hub\", "
      "<https://blog.example/feed/>; rel=\"self\"");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].target, "https://pubsubhubbub.appspot.com");
  EXPECT_TRUE(links[0].HasRel("hub"));
  EXPECT_FALSE(links[0].HasRel("self"));
  EXPECT_EQ(links[1].target, "https://blog.example/feed/");
  EXPECT_TRUE(links[1].HasRel("self"));
}

TEST(LinkHeaderTest, TokensCaseSeveralRelsAndOtherParameters) {
  auto links = ParseLinkHeader(
      "<https://h.example/>;REL=HUB;title=\"a, b; c\" , "
      "</x>; type=\"text/html\"; rel=\"alternate  Self\"; rel=hub");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_TRUE(links[0].HasRel("hub"));
  EXPECT_EQ(links[1].target, "/x");
  EXPECT_TRUE(links[1].HasRel("self"));
  EXPECT_TRUE(links[1].HasRel("alternate"));
  EXPECT_FALSE(links[1].HasRel("hub"));  // only the first rel counts
}

TEST(LinkHeaderTest, JunkIsSkippedNotFatal) {
  auto links = ParseLinkHeader(
      "garbage; rel=hub, <>; rel=hub, <https://ok.example/> junk; rel=hub, "
      "<https://good.example/>; rel=\"hub\", <https://open.example/; rel=hub");
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].target, "https://good.example/");
  EXPECT_TRUE(ParseLinkHeader("").empty());
  EXPECT_TRUE(ParseLinkHeader(";;;,,,\"").empty());
}

TEST(LinkHeaderTest, Bounded) {
  std::string many;
  for (int i = 0; i < 100; ++i) {
    many += "<https://h" + std::to_string(i) + ".example/>; rel=hub, ";
  }
  EXPECT_EQ(ParseLinkHeader(many).size(), kMaxLinkValues);
  const std::string huge = "<https://h.example/" +
                           std::string(kMaxLinkTargetBytes, 'a') +
                           ">; rel=hub, <https://small.example/>; rel=hub";
  auto links = ParseLinkHeader(huge);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].target, "https://small.example/");
}

TEST(LinkHeaderTest, ValuesOfTheLastResponseHead) {
  const std::string head =
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\n"
      "link: <https://hub.example/>; rel=hub\r\n"
      "X-Link: <https://not.example/>; rel=hub\r\n"
      "Link: <https://self.example/f>; rel=self\r\n\r\n";
  auto values = LinkHeaderValues(head);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0], "<https://hub.example/>; rel=hub");
  EXPECT_EQ(values[1], "<https://self.example/f>; rel=self");
}

constexpr char kAtom[] = R"(<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link rel="hub" href="https://hub.example/"/>
  <link rel="hub" href="/local-hub"/>
  <link rel="self" href="https://blog.example/atom.xml"/>
  <link rel="alternate" href="https://blog.example/"/>
  <entry><link href="/p1"/><link rel="hub" href="https://entry-level.example/"/>
    <updated>2026-11-01T00:00:00Z</updated></entry>
</feed>)";

constexpr char kRss[] = R"(<rss version="2.0"
    xmlns:atom="http://www.w3.org/2005/Atom"><channel>
  <title>t</title><link>https://blog.example/</link>
  <atom:link rel="hub" href="https://pubsubhubbub.appspot.com/"/>
  <atom:link rel="self" type="application/rss+xml"
             href="https://blog.example/feed/"/>
  <item><link>https://blog.example/p</link></item>
</channel></rss>)";

TEST(FeedHubTest, AtomAndRssNameTheirHubAndSelf) {
  FeedOptions o;
  o.feed_url = "https://blog.example/atom.xml";
  auto atom = ParseFeed(kAtom, o);
  ASSERT_TRUE(atom.ok()) << atom.status().ToString();
  EXPECT_EQ(atom->hubs,
            (std::vector<std::string>{"https://hub.example/",
                                      "https://blog.example/local-hub"}));
  EXPECT_EQ(atom->self_url, "https://blog.example/atom.xml");
  ASSERT_EQ(atom->entries.size(), 1u);  // entry links stay entries

  o.feed_url = "https://blog.example/feed/";
  auto rss = ParseFeed(kRss, o);
  ASSERT_TRUE(rss.ok()) << rss.status().ToString();
  EXPECT_EQ(rss->hubs,
            std::vector<std::string>{"https://pubsubhubbub.appspot.com/"});
  EXPECT_EQ(rss->self_url, "https://blog.example/feed/");
  EXPECT_EQ(rss->entries.size(), 1u);
}

TEST(FeedHubTest, LinkHeadersTakePrecedence) {
  FeedOptions o;
  o.feed_url = "https://blog.example/atom.xml";
  auto feed = ParseFeed(kAtom, o);
  ASSERT_TRUE(feed.ok());
  // No hub in the headers: the body's stay.
  UseLinkHeaders("HTTP/1.1 200 OK\r\nLink: </x>; rel=self\r\n\r\n", o.feed_url,
                 &feed.value());
  EXPECT_EQ(feed->hubs.size(), 2u);
  EXPECT_EQ(feed->self_url, "https://blog.example/atom.xml");
  UseLinkHeaders(
      "HTTP/1.1 200 OK\r\nLink: </h>; rel=hub, </s>; rel=self\r\n"
      "Link: <ftp://no.example/>; rel=hub\r\n\r\n",
      o.feed_url, &feed.value());
  EXPECT_EQ(feed->hubs, std::vector<std::string>{"https://blog.example/h"});
  EXPECT_EQ(feed->self_url, "https://blog.example/s");
}

TEST(FeedHubTest, HubLinksAreBounded) {
  std::string x = "<feed xmlns=\"http://www.w3.org/2005/Atom\">";
  for (int i = 0; i < 50; ++i) {
    x += "<link rel=\"hub\" href=\"https://h" + std::to_string(i) +
         ".example/\"/>";
  }
  x += "<link rel=\"hub\" href=\"javascript:alert(1)\"/></feed>";
  auto feed = ParseFeed(x, FeedOptions{});
  ASSERT_TRUE(feed.ok());
  EXPECT_EQ(feed->hubs.size(), kMaxFeedHubLinks);
}

}  // namespace
}  // namespace freshd::parse

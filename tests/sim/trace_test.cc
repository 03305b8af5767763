// sim/trace: the CSV trace reader's rules (sim/trace.h), one test each.

#include "sim/trace.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace freshd::sim {
namespace {

Trace Parse(const std::string& text, const TraceLimits& limits = {}) {
  Result<Trace> t = ParseTraceText(text, "t.csv", limits);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Trace{};
}

std::string Error(const std::string& text, const TraceLimits& limits = {}) {
  Result<Trace> t = ParseTraceText(text, "t.csv", limits);
  EXPECT_FALSE(t.ok());
  return t.ok() ? "" : t.status().message();
}

TEST(TraceTest, HeaderNamesColumnsInAnyOrderAndIgnoresOthers) {
  Trace t = Parse(
      "Time,extra,URL\n"
      "100,x,http://a.example/p\n"
      "200,y,http://a.example/p\n");
  ASSERT_EQ(t.pages.size(), 1u);
  EXPECT_EQ(t.urls[0], "http://a.example/p");
  EXPECT_EQ(t.pages[0].changes, (std::vector<double>{100, 200}));
  EXPECT_EQ(t.first_time, 100);
  EXPECT_EQ(t.last_time, 200);
  EXPECT_EQ(t.rows, 2u);
}

TEST(TraceTest, MissingRequiredColumnIsAnError) {
  EXPECT_NE(Error("url,importance\nhttp://a.example/,1\n").find("'time'"),
            std::string::npos);
  EXPECT_NE(Error("time\n5\n").find("t.csv:1:"), std::string::npos);
  EXPECT_NE(Error("url,time,URL\n").find("named twice"), std::string::npos);
  EXPECT_NE(Error("").find("empty trace"), std::string::npos);
}

TEST(TraceTest, Rfc4180Quoting) {
  Trace t = Parse(
      "url,time,note\r\n"
      "\"http://a.example/a,b\",1,\"multi\r\nline \"\"quoted\"\"\"\r\n"
      "http://a.example/c,2,plain\r\n");
  ASSERT_EQ(t.pages.size(), 2u);
  EXPECT_EQ(t.urls[0], "http://a.example/a,b");
  EXPECT_EQ(t.urls[1], "http://a.example/c");
  EXPECT_EQ(t.pages[1].changes, (std::vector<double>{2}));
}

TEST(TraceTest, MalformedQuotingNamesItsLine) {
  const std::string head = "url,time\nhttp://a.example/,1\n";
  EXPECT_NE(Error(head + "\"http://a.example/x,1\n").find("t.csv:3:"),
            std::string::npos);
  EXPECT_NE(Error(head + "http://a\"b.example/,1\n").find("quote inside"),
            std::string::npos);
  EXPECT_NE(Error(head + "\"http://a.example/\"x,1\n").find("closing quote"),
            std::string::npos);
  // A record spanning lines: the error names the line it starts on.
  EXPECT_NE(Error(head + "\"http://a.example/\n\",zz\n").find("t.csv:3:"),
            std::string::npos);
}

TEST(TraceTest, TimeIsUnixSecondsOrRfc3339) {
  Trace t = Parse(
      "url,time\n"
      "http://a.example/,1700000000\n"
      "http://a.example/,1700000000.5\n"
      "http://a.example/,2023-11-14T22:13:21Z\n"
      "http://a.example/,2023-11-15T00:13:22+02:00\n");
  ASSERT_EQ(t.pages.size(), 1u);
  EXPECT_EQ(t.pages[0].changes, (std::vector<double>{1700000000, 1700000000.5,
                                                     1700000001, 1700000002}));
  EXPECT_NE(
      Error("url,time\nhttp://a.example/,yesterday\n").find("t.csv:2: time"),
      std::string::npos);
  EXPECT_FALSE(ParseTraceText("url,time\nhttp://a.example/,1e9\n", "t").ok());
  EXPECT_FALSE(
      ParseTraceText("url,time\nhttp://a.example/,2023-02-30\n", "t").ok());
  EXPECT_FALSE(
      ParseTraceText("url,time\nhttp://a.example/,99999999999999999\n", "t")
          .ok());
}

TEST(TraceTest, EventsAndLifetimes) {
  Trace t = Parse(
      "url,time,event\n"
      "http://a.example/new,50,create\n"
      "http://a.example/new,60,\n"
      "http://a.example/new,40,change\n"  // before creation: dropped
      "http://a.example/gone,10,change\n"
      "http://a.example/gone,70,DELETE\n"
      "http://a.example/gone,80,change\n"  // after deletion: dropped
      "http://a.example/old,20,change\n");
  ASSERT_EQ(t.pages.size(), 3u);
  // Sorted by URL: gone, new, old.
  EXPECT_EQ(t.urls[0], "http://a.example/gone");
  EXPECT_EQ(t.pages[0].created, -INFINITY);
  EXPECT_EQ(t.pages[0].deleted, 70);
  EXPECT_EQ(t.pages[0].changes, (std::vector<double>{10}));
  EXPECT_EQ(t.pages[1].created, 50);
  EXPECT_EQ(t.pages[1].deleted, INFINITY);
  EXPECT_EQ(t.pages[1].changes, (std::vector<double>{60}));
  EXPECT_EQ(t.changes, 3u);
  EXPECT_EQ(t.first_time, 10);
  EXPECT_EQ(t.last_time, 80);
  EXPECT_NE(Error("url,time,event\nhttp://a.example/,5,modify\n")
                .find("t.csv:2: event"),
            std::string::npos);
  // Created and deleted at one time (a file added and removed in one
  // commit): the page never existed and is left out, counted.
  t = Parse(
      "url,time,event\nhttp://a.example/,5,create\n"
      "http://a.example/,5,change\nhttp://a.example/,5,delete\n"
      "http://a.example/x,7,change\n");
  ASSERT_EQ(t.pages.size(), 1u);
  EXPECT_EQ(t.urls[0], "http://a.example/x");
  EXPECT_EQ(t.empty_lifetimes, 1u);
}

TEST(TraceTest, RecreationCountsAsAChange) {
  Trace t = Parse(
      "url,time,event\n"
      "http://a.example/,10,create\n"
      "http://a.example/,20,delete\n"
      "http://a.example/,30,create\n"
      "http://a.example/,40,delete\n");
  ASSERT_EQ(t.pages.size(), 1u);
  EXPECT_EQ(t.pages[0].created, 10);
  EXPECT_EQ(t.pages[0].deleted, 40);
  EXPECT_EQ(t.pages[0].changes, (std::vector<double>{30}));
}

TEST(TraceTest, EmptyTimeDeclaresAStaticPage) {
  Trace t = Parse(
      "url,time,importance\n"
      "http://b.example/static,,3\n"
      "http://a.example/x,5,\n");
  ASSERT_EQ(t.pages.size(), 2u);
  EXPECT_EQ(t.urls[1], "http://b.example/static");
  EXPECT_TRUE(t.pages[1].changes.empty());
  EXPECT_EQ(t.pages[1].created, -INFINITY);
  EXPECT_EQ(t.pages[1].deleted, INFINITY);
  EXPECT_EQ(t.pages[1].importance, 3);
  EXPECT_EQ(t.pages[0].importance, 1);
  EXPECT_NE(
      Error("url,time,event\nhttp://a.example/,,create\n").find("needs a time"),
      std::string::npos);
  // No time at all: the span is undefined.
  Trace s = Parse("url,time\nhttp://a.example/,\n");
  EXPECT_TRUE(std::isnan(s.first_time));
}

TEST(TraceTest, DuplicateRowsCountOnceAndOrderDoesNotMatter) {
  Trace a = Parse(
      "url,time\n"
      "http://a.example/,30\nhttp://a.example/,10\nhttp://a.example/,30\n"
      "http://b.example/,20\n");
  Trace b = Parse(
      "url,time\n"
      "http://b.example/,20\nhttp://a.example/,30\nhttp://a.example/,10\n");
  ASSERT_EQ(a.pages.size(), 2u);
  EXPECT_EQ(a.urls, b.urls);
  EXPECT_EQ(a.hosts, b.hosts);
  EXPECT_EQ(a.pages[0].changes, (std::vector<double>{10, 30}));
  EXPECT_EQ(a.pages[0].changes, b.pages[0].changes);
  EXPECT_EQ(a.changes, 3u);
  EXPECT_EQ(a.hosts, (std::vector<std::string>{"a.example", "b.example"}));
  EXPECT_EQ(a.pages[1].host, 1u);
}

TEST(TraceTest, UrlsAreNormalisedAsTheCrawlerDoes) {
  Trace t = Parse(
      "url,time\n"
      "HTTP://A.Example:80/a/../p#frag,1\n"
      "http://a.example/p,2\n"
      "http://a.example/%7euser,3\n");
  ASSERT_EQ(t.pages.size(), 2u);
  EXPECT_EQ(t.urls[0], "http://a.example/p");
  EXPECT_EQ(t.pages[0].changes, (std::vector<double>{1, 2}));
  EXPECT_EQ(t.urls[1], "http://a.example/~user");
  EXPECT_NE(Error("url,time\nftp://a.example/,1\n").find("t.csv:2: url"),
            std::string::npos);
  EXPECT_NE(Error("url,time\n/relative,1\n").find("t.csv:2: url"),
            std::string::npos);
}

TEST(TraceTest, ImportanceIsOneValuePerPage) {
  Trace t = Parse(
      "url,time,importance\n"
      "http://a.example/,1,2.5\nhttp://a.example/,2,\nhttp://a.example/"
      ",3,2.5\n");
  EXPECT_EQ(t.pages[0].importance, 2.5);
  const std::string e = Error(
      "url,time,importance\n"
      "http://a.example/,1,2\nhttp://a.example/,2,3\n");
  EXPECT_NE(e.find("t.csv:3: importance"), std::string::npos) << e;
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  EXPECT_FALSE(
      ParseTraceText("url,time,importance\nhttp://a.example/,1,0\n", "t").ok());
  EXPECT_FALSE(
      ParseTraceText("url,time,importance\nhttp://a.example/,1,nan\n", "t")
          .ok());
  EXPECT_FALSE(
      ParseTraceText("url,time,importance\nhttp://a.example/,1,2e6\n", "t")
          .ok());
}

TEST(TraceTest, SizesAreBounded) {
  TraceLimits small;
  small.max_record_bytes = 40;
  small.max_fields = 3;
  small.max_pages = 2;
  small.max_events = 3;
  EXPECT_NE(Error("url,time\nhttp://a.example/" + std::string(40, 'x') + ",1\n",
                  small)
                .find("t.csv:2: record longer"),
            std::string::npos);
  EXPECT_NE(Error("url,time\nhttp://a.example/,1,a,b\n", small)
                .find("more than 3 fields"),
            std::string::npos);
  Result<Trace> pages = ParseTraceText(
      "url,time\nhttp://a.example/1,\nhttp://a.example/2,\nhttp://a.example/"
      "3,\n",
      "t.csv", small);
  ASSERT_FALSE(pages.ok());
  EXPECT_EQ(pages.status().code(), Status::Code::kResourceExhausted);
  EXPECT_NE(pages.status().message().find("t.csv:4: more than 2 pages"),
            std::string::npos);
  Result<Trace> events = ParseTraceText(
      "url,time\nhttp://a.example/,1\nhttp://a.example/,2\n"
      "http://a.example/,3\nhttp://a.example/,4\n",
      "t.csv", small);
  ASSERT_FALSE(events.ok());
  EXPECT_NE(events.status().message().find("more than 3 events"),
            std::string::npos);
  // A URL longer than the crawler's limit.
  EXPECT_NE(
      Error("url,time\nhttp://a.example/" + std::string(9000, 'x') + ",1\n")
          .find("t.csv:2: url"),
      std::string::npos);
  EXPECT_NE(Error("url,time\n,1\n").find("t.csv:2: url"), std::string::npos);
  EXPECT_NE(Error("url,time,event\nhttp://a.example/\n").find("too few"),
            std::string::npos);
}

TEST(TraceTest, BlankLinesAreSkipped) {
  Trace t = Parse("\nurl,time\n\nhttp://a.example/,1\n\n");
  EXPECT_EQ(t.pages.size(), 1u);
  EXPECT_EQ(t.rows, 1u);
}

TEST(TraceTest, MeanRateIsChangesOverLifetimeWithinTheWindow) {
  Trace t = Parse(
      "url,time,event\n"
      "http://a.example/,100,create\n"
      "http://a.example/,150,\n"
      "http://a.example/,200,\n"
      "http://a.example/,300,delete\n");
  const TracePage& p = t.pages[0];
  EXPECT_DOUBLE_EQ(TraceMeanRate(p, 0, 1000), 2.0 / 200);
  EXPECT_DOUBLE_EQ(TraceMeanRate(p, 160, 1000), 1.0 / 140);
  EXPECT_EQ(TraceMeanRate(p, 400, 1000), 0);
}

TEST(TraceTest, DeletedThenCreatedAgainCountsThroughout) {
  // A page that exists from the start, is deleted and comes back (a file
  // removed and restored, as tldr's history has): it counts throughout, and
  // its return is a change.
  Trace t = Parse(
      "url,time,event\n"
      "http://a.example/p,10,change\n"
      "http://a.example/p,20,delete\n"
      "http://a.example/p,30,create\n"
      "http://a.example/p,40,change\n");
  ASSERT_EQ(t.pages.size(), 1u);
  EXPECT_EQ(t.pages[0].created, -INFINITY);
  EXPECT_EQ(t.pages[0].deleted, INFINITY);
  EXPECT_EQ(t.pages[0].changes, (std::vector<double>{10, 30, 40}));
  // Deleted, restored, deleted for good: ends at the last delete.
  t = Parse(
      "url,time,event\n"
      "http://a.example/q,20,delete\n"
      "http://a.example/q,30,create\n"
      "http://a.example/q,50,delete\n");
  EXPECT_EQ(t.pages[0].created, -INFINITY);
  EXPECT_EQ(t.pages[0].deleted, 50);
  EXPECT_EQ(t.pages[0].changes, (std::vector<double>{30}));
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "." + std::to_string(::getpid())))
      .string();
}

TEST(TraceTest, LoadTraceReadsPlainAndGzipFiles) {
  const std::string text =
      "url,time\nhttp://a.example/p,100\nhttp://a.example/p,200\n";
  const std::string plain = TempPath("trace.csv");
  const std::string packed = TempPath("trace.csv.gz");
  {
    std::ofstream out(plain, std::ios::binary);
    out << text;
  }
  gzFile gz = gzopen(packed.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  for (const std::string& path : {plain, packed}) {
    Result<Trace> t = LoadTrace(path);
    ASSERT_TRUE(t.ok()) << path << ": " << t.status().ToString();
    ASSERT_EQ(t->pages.size(), 1u);
    EXPECT_EQ(t->pages[0].changes, (std::vector<double>{100, 200}));
  }
  // A gzip file cut short is an error, not a shorter trace.
  std::string bytes;
  {
    std::ifstream in(packed, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  {
    std::ofstream out(packed, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 12));
  }
  EXPECT_FALSE(LoadTrace(packed).ok());
  std::filesystem::remove(plain);
  std::filesystem::remove(packed);
}

TEST(TraceTest, EveryCommittedRealTraceLoads) {
  // The traces tests/data/traces keeps (its README: origin and licence),
  // read as freshd sim --trace reads them.
  const std::filesystem::path dir =
      std::filesystem::path(FRESHD_TEST_DATA_DIR) / "traces";
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".gz") continue;
    Result<Trace> t = LoadTrace(entry.path().string());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_GT(t->pages.size(), 100u) << entry.path();
    EXPECT_GT(t->changes, 100u) << entry.path();
    ++loaded;
  }
  EXPECT_GE(loaded, 5);
}

TEST(TraceTest, LoadTraceReportsAMissingFile) {
  Result<Trace> t = LoadTrace("/nonexistent/trace.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace freshd::sim

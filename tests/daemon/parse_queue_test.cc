// ParseQueue alone: the one parse job of pages, sitemaps and feeds, on a
// real pool and io_context, no network and no loop.

#include "daemon/parse_queue.h"

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "parse/sitemap.h"
#include "store/warc_format.h"

namespace freshd::daemon {
namespace {

// One gzip member, as the WARC writer makes them.
std::string Gzip(std::string_view in) {
  Result<std::string> gz = store::GzipMember(in);
  EXPECT_TRUE(gz.ok());
  return gz.ok() ? *gz : std::string();
}

// A urlset of `n` entries, ~90 bytes each: n = 30,000 decodes to ~2.7 MB,
// several of fetch::kDecodeSliceBytes.
std::string Urlset(int n) {
  std::string doc =
      "<?xml version=\"1.0\"?>\n<urlset "
      "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  for (int i = 0; i < n; ++i) {
    doc += "<url><loc>http://a.example/section/page-" + std::to_string(i) +
           ".html</loc><lastmod>2026-11-01</lastmod></url>\n";
  }
  return doc + "</urlset>\n";
}

fetch::FetchResult Ok(std::string body, std::string encoding = "") {
  fetch::FetchResult r;
  r.url = r.final_url = "http://a.example/sitemap.xml";
  r.outcome = fetch::OutcomeClass::kOk;
  r.status = 200;
  r.body = std::move(body);
  r.content_encoding = std::move(encoding);
  return r;
}

class Order {
 public:
  void Add(std::string what) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(std::move(what));
  }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> seen_;
};

TEST(ParseQueueTest, GzipSitemapDecodesInSlicesAndIsCounted) {
  boost::asio::io_context io;
  ParseQueue queue(io, 1);  // one worker: the order of the jobs shows
  const std::string doc = Urlset(30000);
  ASSERT_GT(doc.size(), 4 * fetch::kDecodeSliceBytes);
  const std::string gz = Gzip(doc);
  Order order;

  // A first job holds the only worker while the others queue.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  queue.Submit(
      Ok("hold"), 1 << 20,
      [&, released](fetch::FetchResult&) {
        released.wait();
        order.Add("hold");
        return 0;
      },
      [](fetch::FetchResult, int) {});
  size_t entries = 0;
  parse::SitemapFormat format = parse::SitemapFormat::kSitemapIndex;
  queue.Submit(
      Ok(gz, "gzip"), 64 << 20,
      [&](fetch::FetchResult& r) {
        order.Add("sitemap");
        EXPECT_EQ(r.outcome, fetch::OutcomeClass::kOk) << r.detail;
        EXPECT_TRUE(r.content_encoding.empty());
        EXPECT_EQ(r.body.size(), doc.size());
        return parse::ParseSitemap(r.body, parse::SitemapOptions{});
      },
      [&](fetch::FetchResult, Result<parse::SitemapResult> parsed) {
        ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
        entries = parsed.value().entries.size();
        format = parsed.value().format;
      });
  queue.Submit(
      Ok("small"), 1 << 20,
      [&](fetch::FetchResult&) {
        order.Add("small");
        return 0;
      },
      [](fetch::FetchResult, int) {});

  // The parse queue's figures count every job queued, its bytes as fetched
  // (the sitemap still compressed).
  EXPECT_EQ(queue.jobs(), 3u);
  EXPECT_EQ(queue.bytes(), gz.size() + 4 + 5);

  release.set_value();
  queue.Join();
  // The sitemap took slices: the small job, queued after it, ran between
  // them and was parsed first.
  EXPECT_EQ(order.seen(),
            (std::vector<std::string>{"hold", "small", "sitemap"}));
  EXPECT_EQ(queue.jobs(), 0u);
  EXPECT_EQ(queue.bytes(), 0u);
  EXPECT_EQ(entries, 0u);  // applied only on io's thread
  io.run();
  EXPECT_EQ(entries, 30000u);
  EXPECT_EQ(format, parse::SitemapFormat::kUrlset);
}

TEST(ParseQueueTest, BombEndsTooLargeAndIsUncounted) {
  boost::asio::io_context io;
  ParseQueue queue(io, 2);
  const std::string bomb = Gzip(std::string(8 << 20, 'a'));
  fetch::OutcomeClass seen = fetch::OutcomeClass::kOk;
  size_t body = 1;
  queue.Submit(
      Ok(bomb, "gzip"), 1 << 20,
      [](fetch::FetchResult& r) { return r.outcome; },
      [&](fetch::FetchResult r, fetch::OutcomeClass outcome) {
        seen = outcome;
        body = r.body.size();
      });
  queue.Join();
  io.run();
  EXPECT_EQ(seen, fetch::OutcomeClass::kTooLarge);
  EXPECT_EQ(body, 0u);
  EXPECT_EQ(queue.jobs(), 0u);
  EXPECT_EQ(queue.bytes(), 0u);
}

TEST(ParseQueueTest, NoApplyAfterStop) {
  boost::asio::io_context io;
  bool applied = false;
  {
    ParseQueue queue(io, 1);
    queue.Submit(
        Ok("body"), 1 << 20, [](fetch::FetchResult&) { return 1; },
        [&](fetch::FetchResult, int) { applied = true; });
    queue.Join();  // parsed; its apply waits on io
  }                // the owner goes: Stop
  io.run();
  EXPECT_FALSE(applied);
}

// The applies of jobs parsed while the owner's thread is busy reach it as
// one batch (one wake-up), in the order the parses ended; a move-only
// result travels with its body.
TEST(ParseQueueTest, AppliesParsedTogetherRunAsOneBatchInOrder) {
  boost::asio::io_context io;
  ParseQueue queue(io, 1);  // one worker: parses end in submit order
  std::vector<std::string> applied;
  for (int i = 0; i < 20; ++i) {
    queue.Submit(
        Ok("body " + std::to_string(i)), 1 << 20,
        [](fetch::FetchResult& r) {
          return std::make_unique<std::string>(r.body);
        },
        [&](fetch::FetchResult r, std::unique_ptr<std::string> parsed) {
          EXPECT_EQ(r.body, *parsed);
          applied.push_back(*parsed);
        });
  }
  queue.Join();  // all parsed; the owner's thread (io) has not run yet
  EXPECT_EQ(queue.jobs(), 0u);
  EXPECT_TRUE(applied.empty());
  EXPECT_EQ(queue.apply_batches(), 1u);
  io.run();
  ASSERT_EQ(applied.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(applied[i], "body " + std::to_string(i));
  }
}

// Each job's CPU time on the pool (decoding and parse) reaches the cost
// sink on io's thread, with the URL it was fetched from, just before its
// apply: a gzip sitemap of 30,000 entries costs more than a small body.
TEST(ParseQueueTest, EachJobsCpuTimeReachesTheCostSinkBeforeItsApply) {
  boost::asio::io_context io;
  std::map<std::string, double> costs;
  std::vector<std::string> events;
  const std::thread::id io_thread = std::this_thread::get_id();
  ParseQueue queue(io, 1, [&](std::string_view url, double cpu_s) {
    EXPECT_EQ(std::this_thread::get_id(), io_thread);
    costs[std::string(url)] = cpu_s;
    events.push_back("cost " + std::string(url));
  });
  fetch::FetchResult big = Ok(Gzip(Urlset(30000)), "gzip");
  big.url = "http://big.example/sitemap.xml";
  queue.Submit(
      std::move(big), 64 << 20,
      [](fetch::FetchResult& r) {
        return parse::ParseSitemap(r.body, parse::SitemapOptions{});
      },
      [&](fetch::FetchResult r, Result<parse::SitemapResult>) {
        events.push_back("apply " + r.url);
      });
  fetch::FetchResult small = Ok("small");
  small.url = "http://small.example/x";
  queue.Submit(
      std::move(small), 1 << 20, [](fetch::FetchResult&) { return 0; },
      [&](fetch::FetchResult r, int) { events.push_back("apply " + r.url); });
  queue.Join();
  EXPECT_TRUE(costs.empty());  // handed over on io's thread only
  io.run();
  // Each cost right before its apply (the small body, queued behind the
  // sitemap's slices, ends first).
  EXPECT_EQ(events,
            (std::vector<std::string>{"cost http://small.example/x",
                                      "apply http://small.example/x",
                                      "cost http://big.example/sitemap.xml",
                                      "apply http://big.example/sitemap.xml"}));
  ASSERT_EQ(costs.size(), 2u);
  const double big_s = costs["http://big.example/sitemap.xml"];
  const double small_s = costs["http://small.example/x"];
  EXPECT_GT(small_s, 0.0);
  EXPECT_GT(big_s, 10 * small_s) << big_s << " vs " << small_s;
}

TEST(ParseQueueTest, BodyBytesCountsRawExchange) {
  fetch::FetchResult r = Ok("abc");
  r.raw_body = "xy";
  r.raw_headers = "HTTP/1.1 200 OK\r\n";
  EXPECT_EQ(BodyBytes(r), 3u + 2u + r.raw_headers.size());
}

}  // namespace
}  // namespace freshd::daemon

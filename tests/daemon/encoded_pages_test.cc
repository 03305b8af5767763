// The crawl loop fetches page bodies still in their Content-Encoding and
// decodes them on the parse pool (FetchRequest::defer_decoding): a gzip or
// deflate page is fingerprinted and its links followed as if it came plain;
// a gzip bomb ends too-large and a corrupt stream bad-encoding, as when the
// fetcher decoded them itself; a gzip sitemap read through Content-Encoding
// is applied.

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "conf/config.h"
#include "daemon/crawl_loop.h"
#include "tests/fetch/fetch_helpers.h"
#include "tests/fetch/test_server.h"

namespace freshd::daemon {
namespace {

namespace asio = boost::asio;
using fetch::testing::Compress;
using fetch::testing::Reply;
using fetch::testing::ServerRequest;
using fetch::testing::TestServer;

Reply Encoded(std::string body, const char* coding,
              const char* type = "text/html") {
  Reply r = Reply::Html(std::move(body));
  r.headers.emplace_back("Content-Encoding", coding);
  if (std::string(type) != "text/html") {
    for (auto& [name, value] : r.headers) {
      if (name == "Content-Type") value = type;
    }
  }
  return r;
}

TEST(EncodedPagesTest, BodiesAreDecodedOnTheParsePool) {
  std::string root;
  const std::string page_a =
      "<html><body><p>deflated words here</p><a href=\"/c\">c</a></body>"
      "</html>";
  TestServer server([&](const ServerRequest& req) -> Reply {
    if (req.target == "/robots.txt") {
      return Encoded(Compress("User-agent: *\nAllow: /\nSitemap: " + root +
                                  "sitemap.xml\n",
                              31),
                     "gzip", "text/plain");
    }
    if (req.target == "/sitemap.xml") {
      return Encoded(
          Compress("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/"
                   "0.9\"><url><loc>" +
                       root + "from-sitemap</loc></url></urlset>",
                   31),
          "gzip", "application/xml");
    }
    if (req.target == "/") {
      return Encoded(Compress("<html><body><p>gzipped words</p>"
                              "<a href=\"/a\">a</a><a href=\"/bomb\">b</a>"
                              "<a href=\"/bad\">x</a></body></html>",
                              31),
                     "gzip");
    }
    if (req.target == "/a") return Encoded(Compress(page_a, 15), "deflate");
    if (req.target == "/bomb") {
      return Encoded(Compress(std::string(64 << 20, '\0'), 31), "gzip");
    }
    if (req.target == "/bad")
      return Encoded("\x1f\x8b not gzip at all", "gzip");
    return Reply::Html("<html><body>plain</body></html>");
  });
  root = "http://e.test:" + std::to_string(server.port()) + "/";

  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("encoded_pages_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  Config config;
  config.store.path = (dir / "db").string();
  config.budget.rate = 50;
  config.budget.burst = 5;
  config.sched.min_interval_s = 3600;
  config.sched.max_interval_s = 7200;
  config.politeness.min_delay_s = 0.01;
  config.fetch.allow_private_networks = true;
  config.fetch.max_decompressed_bytes = 8 << 20;
  config.fetch.resolve = {{"e.test", "127.0.0.1"}};

  asio::io_context io;
  auto created = CrawlLoop::Create(io, config);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  CrawlLoop& loop = *created.value();
  ASSERT_TRUE(loop.AddSeed(root, 1).ok());

  // Until /, /a, /c, /from-sitemap are fetched and /bomb, /bad have failed.
  auto done = [&] {
    nlohmann::json s = loop.StatusJson();
    return s["pages_fetched_total"].get<int>() >= 4 &&
           s["errors"].value("too-large", 0) >= 1 &&
           s["errors"].value("bad-encoding", 0) >= 1;
  };
  asio::steady_timer timer(io);
  const auto start = std::chrono::steady_clock::now();
  std::function<void()> check = [&] {
    timer.expires_after(std::chrono::milliseconds(100));
    timer.async_wait([&](boost::system::error_code) {
      if (!done() &&
          std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
        return check();
      }
      loop.Stop(5, [&](Status) { io.stop(); });
    });
  };
  check();
  loop.Start();
  io.run();

  nlohmann::json s = loop.StatusJson();
  EXPECT_EQ(s["pages_fetched_total"], 4) << s.dump();
  EXPECT_EQ(s["pages_known"], 6) << s.dump();  // the seed's 3 links, c, sitemap
  EXPECT_EQ(s["errors"].value("too-large", 0), 1) << s.dump();
  EXPECT_EQ(s["errors"].value("bad-encoding", 0), 1) << s.dump();
  EXPECT_GE(s["sitemaps_fetched_total"].get<int>(), 1) << s.dump();
  auto a = loop.PageJson(root + "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a.value()["fetches"], 1) << a.value().dump();
  EXPECT_EQ(a.value()["consecutive_failures"], 0) << a.value().dump();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace freshd::daemon

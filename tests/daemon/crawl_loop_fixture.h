// The fixture of the CrawlLoop tests (crawl_loop_*_test.cc), shared, not
// copied: a simulated web served by sim::TestWebServer on loopback, a
// config crawling it (real fetcher, real LevelDB in a temp directory), an
// HTTP client for the status endpoint, and a one-page site whose sitemap
// dates its page. One test binary per concern includes it.

#ifndef FRESHD_TESTS_DAEMON_CRAWL_LOOP_FIXTURE_H_
#define FRESHD_TESTS_DAEMON_CRAWL_LOOP_FIXTURE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <thread>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/iso8601.h"
#include "daemon/crawl_loop.h"
#include "daemon/http_server.h"
#include "daemon/seeds.h"
#include "daemon/status_routes.h"
#include "daemon/status_service.h"
#include "parse/url.h"
#include "parse/w3c_datetime.h"
#include "sim/test_web.h"
#include "sim/test_web_server.h"
#include "tests/daemon/loop_runner.h"

namespace freshd::daemon {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;

constexpr char kWeb[] = R"(
hosts = 2
pages_per_host = 15
[[class]]
name = "page"
share = 1.0
static_words = 50
[class.churn]
words = 20
rate = { dist = "uniform", min = 2.0, max = 8.0 }
[class.signals]
recall = 1.0
false_rate = 0.0
)";

// One HTTP/1.1 request to 127.0.0.1:port: "CODE BODY", or "ERR message"
// when there is no reply within 15 s (so a test cannot hang on it). A POST
// is JSON unless `headers` (set last, so they win) say otherwise.
inline std::string AskWith(
    uint16_t port, http::verb verb, const std::string& target,
    const std::string& body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  asio::io_context cio;
  boost::beast::tcp_stream stream(cio);
  stream.expires_after(std::chrono::seconds(15));
  http::request<http::string_body> req(verb, target, 11);
  req.set(http::field::host, "127.0.0.1");
  if (verb == http::verb::post) {
    req.set(http::field::content_type, "application/json");
  }
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.prepare_payload();
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  boost::system::error_code result;
  stream.async_connect(
      {asio::ip::make_address("127.0.0.1"), port},
      [&](boost::system::error_code ec) {
        if (ec) return void(result = ec);
        http::async_write(
            stream, req, [&](boost::system::error_code ec, size_t) {
              if (ec) return void(result = ec);
              http::async_read(
                  stream, buf, res,
                  [&](boost::system::error_code ec, size_t) { result = ec; });
            });
      });
  cio.run();
  if (result) return "ERR " + result.message();
  return std::to_string(res.result_int()) + " " + res.body();
}

inline std::string Ask(uint16_t port, http::verb verb,
                       const std::string& target, const std::string& body) {
  return AskWith(port, verb, target, body, {});
}

using testing::MetricValue;

inline double UnixNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class CrawlLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = sim::ParseWebSpec(kWeb, "web.toml");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    sim::TestWebOptions o;
    o.day_seconds = 2;  // pages change ~2-8 times per 2 s
    o.start_unix = UnixNow();
    web_ = std::make_shared<const sim::TestWeb>(
        sim::WebModel::Build(spec.value(), 3), o);
    auto server = sim::TestWebServer::Start(web_, "127.0.0.1", 0);
    ASSERT_TRUE(server.ok());
    server_ = std::move(server).value();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("crawl_loop_test_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);

    config_.store.path = (dir_ / "db").string();
    config_.store.warc_dir = (dir_ / "warc").string();
    std::filesystem::create_directories(config_.store.warc_dir);
    config_.budget.rate = 20;
    config_.budget.burst = 5;
    config_.sched.min_interval_s = 0.05;
    config_.sched.max_interval_s = 5;
    config_.politeness.min_delay_s = 0.02;
    config_.politeness.robots_cache_s = 1;
    config_.fetch.allow_private_networks = true;
    config_.fetch.resolve = {{"h0.test", "127.0.0.1"},
                             {"h1.test", "127.0.0.1"}};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Seed(int host) const {
    return "http://h" + std::to_string(host) +
           ".test:" + std::to_string(server_->port()) + "/";
  }

  // Runs `io` for at least `min_seconds` and until `done()` (checked every
  // 100 ms) or `max_seconds`, then stops the loop cleanly.
  void RunUntil(asio::io_context& io, CrawlLoop& loop, double min_seconds,
                double max_seconds, const std::function<bool()>& done) {
    testing::RunLoopUntil(io, loop, min_seconds, max_seconds, done);
  }

  // Runs `io` for `seconds` (to the next 100 ms), then stops the loop.
  void RunFor(asio::io_context& io, CrawlLoop& loop, double seconds) {
    RunUntil(io, loop, seconds, seconds, [] { return true; });
  }

  std::shared_ptr<const sim::TestWeb> web_;
  std::unique_ptr<sim::TestWebServer> server_;
  std::filesystem::path dir_;
  Config config_;
};

// A site named `name` on 127.0.0.1, at an ephemeral port, answered by
// `handler` whatever the Host header says; [fetch] resolve in `config` maps
// the name. Sets `*server` and `*root` ("http://NAME:PORT/"); false (and a
// test failure) when it cannot listen.
inline bool ListenAsSite(asio::io_context& io, const std::string& name,
                         Config* config, HttpServer::Handler handler,
                         std::unique_ptr<HttpServer>* server,
                         std::string* root) {
  HttpServerOptions options;
  options.public_listener = true;  // Host: NAME:PORT
  auto listening =
      HttpServer::Listen(io, "127.0.0.1:0", std::move(handler), options);
  EXPECT_TRUE(listening.ok()) << listening.status().ToString();
  if (!listening.ok()) return false;
  *server = std::move(listening).value();
  *root = "http://" + name + ":" + std::to_string((*server)->port()) + "/";
  config->fetch.resolve[name] = "127.0.0.1";
  return true;
}

// A one-page site on loopback, http://s.test:PORT/ (resolved through
// [fetch] resolve): robots.txt names its sitemap, which dates the page by
// `lastmod()` (a W3C datetime) and also lists `extra_urls` URLs /p/0, /p/1,
// ... (no lastmod; any path serves the same page). Returns the root URL;
// the server lives in `*site`.
inline std::string OnePageSite(asio::io_context& io, Config* config,
                               std::function<std::string()> lastmod,
                               std::unique_ptr<HttpServer>* site,
                               int extra_urls = 0) {
  auto root = std::make_shared<std::string>();
  HttpServerOptions site_options;
  site_options.allowed_hosts = {"s.test"};  // the crawler's Host: s.test:PORT
  auto listening = HttpServer::Listen(
      io, "127.0.0.1:0",
      [root, lastmod, extra_urls](const HttpRequest& r) {
        if (r.target == "/robots.txt") {
          return HttpReply{
              200, "text/plain",
              "User-agent: *\nAllow: /\nSitemap: " + *root + "sitemap.xml\n"};
        }
        if (r.target == "/sitemap.xml") {
          std::string xml =
              "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
              "<url><loc>" +
              *root + "</loc><lastmod>" + lastmod() + "</lastmod></url>";
          for (int i = 0; i < extra_urls; ++i) {
            xml += "<url><loc>" + *root + "p/" + std::to_string(i) +
                   "</loc></url>";
          }
          return HttpReply{200, "application/xml", xml + "</urlset>"};
        }
        return HttpReply{200, "text/html", "<html><body>still</body></html>"};
      },
      site_options);
  if (!listening.ok()) return "";
  *site = std::move(listening).value();
  *root = "http://s.test:" + std::to_string((*site)->port()) + "/";
  config->fetch.resolve["s.test"] = "127.0.0.1";
  return *root;
}

// A loop on `io` with `*config`, seeded with a new OnePageSite's root
// (returned in *root); nullptr, with a test failure, when either does not
// start.
inline std::unique_ptr<CrawlLoop> OnePageLoop(
    asio::io_context& io, Config* config, std::function<std::string()> lastmod,
    std::unique_ptr<HttpServer>* site, std::string* root, int extra_urls = 0) {
  *root = OnePageSite(io, config, std::move(lastmod), site, extra_urls);
  EXPECT_FALSE(root->empty());
  if (root->empty()) return nullptr;
  return testing::SeededLoop(io, *config, *root);
}

}  // namespace
}  // namespace freshd::daemon

#endif  // FRESHD_TESTS_DAEMON_CRAWL_LOOP_FIXTURE_H_

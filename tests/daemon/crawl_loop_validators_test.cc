// CrawlLoop's conditional GETs with the validators out of memory (issue 43
// item 2): a page served with an ETag and a Last-Modified is crawled and
// committed; after a restart (which loads no validator) its next fetch
// sends If-None-Match and If-Modified-Since with the stored values, read
// from the store at the dispatch, and gets a 304. A real site on loopback
// sees the request headers.

#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon {
namespace {

constexpr char kEtag[] = "\"v1\"";
constexpr char kLastModified[] = "Tue, 24 Nov 2026 10:00:00 GMT";

// One page at / with fixed validators (304 when If-None-Match names them);
// robots.txt and anything else: 404. Records what each request for / sent.
class ConditionalSite {
 public:
  struct Seen {
    std::string if_none_match, if_modified_since;
    int status = 0;
  };

  ConditionalSite() : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    acceptor_.non_blocking(true);
    thread_ = std::thread([this] { Accept(); });
  }
  ~ConditionalSite() {
    stop_ = true;
    thread_.join();
    for (std::thread& t : connections_) t.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  std::vector<Seen> seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  void Accept() {
    while (!stop_) {
      boost::system::error_code ec;
      asio::ip::tcp::socket socket(io_);
      acceptor_.accept(socket, ec);
      if (ec) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      connections_.emplace_back(
          [this, s = std::move(socket)]() mutable { Serve(std::move(s)); });
    }
  }

  void Serve(asio::ip::tcp::socket socket) {
    socket.non_blocking(false);
    timeval tv{0, 200 * 1000};  // a read wakes up to see stop_
    setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    boost::beast::flat_buffer buf;
    while (!stop_) {
      http::request<http::string_body> req;
      boost::system::error_code ec;
      http::read(socket, buf, req, ec);
      if (ec == boost::beast::http::error::end_of_stream) break;
      if (ec) {
        if (ec == asio::error::would_block || ec == asio::error::try_again ||
            ec == asio::error::timed_out) {
          continue;
        }
        break;
      }
      http::response<http::string_body> res;
      res.version(11);
      res.keep_alive(req.keep_alive());
      if (req.target() == "/") {
        Seen s;
        s.if_none_match = std::string(req[http::field::if_none_match]);
        s.if_modified_since = std::string(req[http::field::if_modified_since]);
        s.status = s.if_none_match == kEtag ? 304 : 200;
        res.result(s.status);
        res.set(http::field::etag, kEtag);
        res.set(http::field::last_modified, kLastModified);
        if (s.status == 200) {
          res.set(http::field::content_type, "text/html");
          res.body() = "<html><body><p>the same words</p></body></html>";
        }
        std::lock_guard<std::mutex> lock(mu_);
        seen_.push_back(s);
      } else {
        res.result(404);
        res.set(http::field::content_type, "text/plain");
        res.body() = "no";
      }
      res.prepare_payload();
      http::write(socket, res, ec);
      if (ec || !req.keep_alive()) break;
    }
    boost::system::error_code ignored;
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  }

  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::thread> connections_;  // the accept thread's
  mutable std::mutex mu_;
  std::vector<Seen> seen_;  // guarded by mu_
};

TEST_F(CrawlLoopTest, AfterARestartTheStoredValidatorsMakeItConditional) {
  ConditionalSite site;
  config_.fetch.resolve["v.test"] = "127.0.0.1";
  const std::string root = "http://v.test:" + std::to_string(site.port()) + "/";
  {
    asio::io_context io;
    auto loop = testing::SeededLoop(io, config_, root);
    ASSERT_NE(loop, nullptr);
    RunUntil(io, *loop, 0.2, 20, [&] { return !site.seen().empty(); });
  }  // stopped: its records committed
  std::vector<ConditionalSite::Seen> seen = site.seen();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen[0].if_none_match, "");  // the first fetch: unconditional
  EXPECT_EQ(seen[0].if_modified_since, "");
  EXPECT_EQ(seen[0].status, 200);
  const size_t before = seen.size();

  asio::io_context io;
  auto loop = CrawlLoop::Create(io, config_);  // no seed: from the store
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  ASSERT_EQ(loop.value()->urls().size(), 1u);
  RunUntil(io, *loop.value(), 0.2, 30,
           [&] { return site.seen().size() > before; });
  seen = site.seen();
  ASSERT_GT(seen.size(), before);
  EXPECT_EQ(seen[before].if_none_match, kEtag);
  EXPECT_EQ(seen[before].if_modified_since, kLastModified);
  EXPECT_EQ(seen[before].status, 304);
  const nlohmann::json s = loop.value()->StatusJson();
  EXPECT_EQ(s["validator_read_failures_total"], 0) << s.dump();
  EXPECT_NE(loop.value()->MetricsText().find(
                "\nfreshd_validator_read_failures_total 0"),
            std::string::npos);
}

}  // namespace
}  // namespace freshd::daemon

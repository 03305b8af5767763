// PushListener over real sockets on 127.0.0.1, with a real IndexNowReceiver
// on a thread of its own (its hooks answer no fetch): one route, nothing of
// status, metrics or control; malformed pings answered 400/422 on the
// listener's thread; the per-client limit keyed by the client a trusted
// proxy names. TrustedProxies and ClientRateLimiter alone.

#include "daemon/push_listener.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>

#include "daemon/push_clients.h"

namespace freshd::daemon {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;

// One request; "CODE BODY", or "ERR ..." without a reply in 10 s.
std::string Ask(uint16_t port, http::verb verb, const std::string& target,
                const std::string& body = "",
                const std::string& type = "application/json",
                const std::string& forwarded_for = "") {
  asio::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.expires_after(std::chrono::seconds(10));
  boost::system::error_code ec;
  stream.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) return "ERR " + ec.message();
  http::request<http::string_body> req(verb, target, 11);
  req.set(http::field::host, "push.example.org");
  req.set(http::field::origin, "https://elsewhere.example");
  if (!type.empty()) req.set(http::field::content_type, type);
  if (!forwarded_for.empty()) req.set("X-Forwarded-For", forwarded_for);
  req.body() = body;
  req.prepare_payload();
  http::write(stream, req, ec);
  if (ec) return "ERR " + ec.message();
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(stream, buf, res, ec);
  if (ec) return "ERR " + ec.message();
  return std::to_string(res.result_int()) + " " + res.body();
}

int Code(const std::string& reply) { return std::atoi(reply.c_str()); }

class PushListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    IndexNowReceiver::Hooks h;
    h.in_scope = [](const std::string& url) {
      return url.starts_with("https://a.test/");
    };
    h.fetch = [this](std::string, std::function<void(fetch::FetchResult)>) {
      ++fetches_;
    };
    h.signal = [](std::vector<std::string>) {};
    h.now = [] { return 0.0; };
    receiver_ = std::make_unique<IndexNowReceiver>(IndexNowReceiver::Options{},
                                                   std::move(h));
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    listener_.reset();
    work_.reset();
    thread_.join();
  }
  uint16_t Start(PushListener::Options options) {
    options.listen = "127.0.0.1:0";
    auto listener = PushListener::Start(io_, receiver_.get(), options);
    EXPECT_TRUE(listener.ok()) << listener.status().ToString();
    if (!listener.ok()) return 0;
    listener_ = std::move(listener).value();
    return listener_->port();
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::atomic<int> fetches_{0};
  std::unique_ptr<IndexNowReceiver> receiver_;
  std::thread thread_;
  std::unique_ptr<PushListener> listener_;
};

TEST_F(PushListenerTest, ServesIndexNowAndNothingElse) {
  const uint16_t port = Start({});
  ASSERT_NE(port, 0);
  for (const char* path :
       {"/status", "/metrics", "/signal", "/", "/page", "/changes", "/hosts"}) {
    EXPECT_EQ(Code(Ask(port, http::verb::get, path)), 404) << path;
  }
  EXPECT_EQ(Code(Ask(port, http::verb::post, "/signal", R"({"urls":[]})")),
            404);
  EXPECT_EQ(Code(Ask(port, http::verb::put, "/indexnow")), 405);
  // A site's ping, whatever its Host and Origin (not the status endpoint's
  // rules): accepted for a key check.
  const std::string reply =
      Ask(port, http::verb::get,
          "/indexnow?url=https%3A%2F%2Fa.test%2Fx&key=abcd1234");
  EXPECT_EQ(Code(reply), 202) << reply;
  EXPECT_EQ(fetches_, 1);
}

TEST_F(PushListenerTest, MalformedPingsAreAnsweredWithoutTheReceiver) {
  const uint16_t port = Start({});
  ASSERT_NE(port, 0);
  EXPECT_EQ(Code(Ask(port, http::verb::get, "/indexnow")), 400);
  EXPECT_EQ(Code(Ask(port, http::verb::post, "/indexnow", "not json")), 400);
  EXPECT_EQ(Code(Ask(port, http::verb::post, "/indexnow",
                     R"({"host":"a.test","key":"abcd1234",)"
                     R"("urlList":["https://a.test/"]})",
                     "text/plain")),
            400);
  EXPECT_EQ(Code(Ask(port, http::verb::post, "/indexnow",
                     R"({"host":"a.test","key":"bad key!",)"
                     R"("urlList":["https://a.test/"]})")),
            422);
  const std::string ok = Ask(port, http::verb::post, "/indexnow",
                             R"({"host":"a.test","key":"abcd1234",)"
                             R"("urlList":["https://a.test/p"]})",
                             "application/json; charset=utf-8");
  EXPECT_EQ(Code(ok), 202) << ok;
  const nlohmann::json j = receiver_->Json();
  EXPECT_EQ(j["refused"]["malformed"], 3);
  EXPECT_EQ(j["refused"]["not_on_host"], 1);
  EXPECT_EQ(j["received"], 5);
}

TEST_F(PushListenerTest, TheBodyCapHolds) {
  PushListener::Options o;
  o.http.max_body_bytes = 1024;
  const uint16_t port = Start(o);
  ASSERT_NE(port, 0);
  EXPECT_EQ(
      Code(Ask(port, http::verb::post, "/indexnow", std::string(4096, ' '))),
      413);
}

TEST_F(PushListenerTest, ClientsBehindATrustedProxyAreLimitedEachAlone) {
  PushListener::Options o;
  o.client_requests_per_minute = 2;
  o.trusted_proxies = {"127.0.0.0/8"};
  const uint16_t port = Start(o);
  ASSERT_NE(port, 0);
  const std::string target = "/indexnow";  // 400s: the limit comes first
  for (const char* client : {"203.0.113.7", "198.51.100.1"}) {
    EXPECT_EQ(Code(Ask(port, http::verb::get, target, "", "", client)), 400);
    EXPECT_EQ(Code(Ask(port, http::verb::get, target, "", "", client)), 400);
    EXPECT_EQ(Code(Ask(port, http::verb::get, target, "", "", client)), 429)
        << client;
  }
  EXPECT_EQ(receiver_->Json()["refused"]["client_rate"], 2);
}

TEST(TrustedProxiesTest, NamesTheClientTheProxiesVouchFor) {
  auto proxies = TrustedProxies::Create({"10.0.0.0/8", "::1", "fd00::/8"});
  ASSERT_TRUE(proxies.ok());
  const TrustedProxies& p = proxies.value();
  EXPECT_TRUE(p.Contains("10.1.2.3"));
  EXPECT_FALSE(p.Contains("11.0.0.1"));
  EXPECT_TRUE(p.Contains("fd12::1"));
  EXPECT_TRUE(p.Contains("::1"));
  EXPECT_FALSE(p.Contains("not an address"));
  // An untrusted peer's header is ignored.
  EXPECT_EQ(p.ClientOf("192.0.2.1", "203.0.113.9"), "192.0.2.1");
  // The rightmost untrusted hop: what the client wrote itself is not read.
  EXPECT_EQ(p.ClientOf("10.0.0.1", "1.1.1.1, 203.0.113.9, 10.0.0.2"),
            "203.0.113.9");
  EXPECT_EQ(p.ClientOf("10.0.0.1", "garbage"), "10.0.0.1");
  EXPECT_EQ(p.ClientOf("10.0.0.1", ""), "10.0.0.1");
  EXPECT_FALSE(TrustedProxies::Create({"10.0.0.0/33"}).ok());
  EXPECT_FALSE(TrustedProxies::Create({"example.com"}).ok());
}

TEST(ClientRateLimiterTest, AMinutesWorthThenAnEvenRefillBounded) {
  ClientRateLimiter limiter(6, 2);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(limiter.Allow("a", 0));
  EXPECT_FALSE(limiter.Allow("a", 0));
  EXPECT_TRUE(limiter.Allow("a", 10));  // 6 a minute: one per 10 s
  EXPECT_FALSE(limiter.Allow("a", 10));
  EXPECT_TRUE(limiter.Allow("b", 10));
  EXPECT_FALSE(limiter.Allow("c", 10));  // two buckets, none full
  EXPECT_TRUE(limiter.Allow("c", 200));  // full ones forgotten
  EXPECT_LE(limiter.clients(), 2u);
}

}  // namespace
}  // namespace freshd::daemon

// HTTP/2 and verified TLS against a real nginx on loopback (see
// nginx_server.h): ALPN negotiates h2, several pages share one connection,
// the certificate verifies with [fetch] ca_file and fails as class tls
// without it or for a name the certificate does not cover.
// If nginx or openssl is missing the tests FAIL (they are not optional).

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <set>
#include <string>
#include <vector>

#include "fetch/crawler.h"
#include "fetch/http_fetcher.h"
#include "tests/fetch/fetch_helpers.h"
#include "tests/fetch/nginx_server.h"

namespace freshd::fetch {
namespace {

using testing::FastFetchConfig;
using testing::FetchOnce;
using testing::NginxServer;

constexpr char kName[] = "www.h2.test";

std::string Page(int i) {
  return "<html><body><p>page " + std::to_string(i) + "</p></body></html>\n";
}

class Http2TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err = server_.Start();
    ASSERT_EQ(err, "") << "cannot run nginx for the HTTP/2 tests: " << err;
    for (int i = 0; i < 6; ++i) {
      server_.AddFile("p" + std::to_string(i) + ".html", Page(i));
    }
    server_.AddFile("robots.txt", "User-agent: *\nDisallow: /p5.html\n");
  }

  // Loopback allowed, both test names resolve to 127.0.0.1. A TLS handshake
  // may take more than FastFetchConfig's 0.5 s on a loaded machine under
  // ASan (seen as "SSL connection timeout"): these tests check outcome
  // classes, not speed.
  FetchConfig Config(bool with_ca) const {
    FetchConfig c = FastFetchConfig();
    c.connect_timeout_s = 10;
    c.resolve[kName] = "127.0.0.1";
    c.resolve["other.h2.test"] = "127.0.0.1";
    if (with_ca) c.ca_file = server_.ca_file();
    return c;
  }

  NginxServer server_{kName};
};

TEST_F(Http2TlsTest, NegotiatesHttp2AndReusesOneConnection) {
  FetcherOptions o;
  o.config = Config(/*with_ca=*/true);
  boost::asio::io_context io;
  auto fetcher = HttpFetcher::Create(io, o);
  ASSERT_TRUE(fetcher.ok());
  std::vector<FetchResult> results;
  // One page first (opens the connection), then five at once: with HTTP/2
  // they are multiplexed on the same connection.
  FetchRequest first;
  first.url = server_.Url("/p0.html");
  (*fetcher)->Fetch(first, [&](FetchResult r) {
    results.push_back(std::move(r));
    for (int i = 1; i < 6; ++i) {
      FetchRequest req;
      req.url = server_.Url("/p" + std::to_string(i) + ".html");
      (*fetcher)->Fetch(
          req, [&](FetchResult r2) { results.push_back(std::move(r2)); });
    }
  });
  io.run();
  ASSERT_EQ(results.size(), 6u);
  int connections = 0;
  std::set<std::string> bodies;
  for (const FetchResult& r : results) {
    EXPECT_EQ(r.outcome, OutcomeClass::kOk) << r.url << ": " << r.detail;
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.http_version, "2") << r.url;
    EXPECT_EQ(r.content_type, "text/html");
    EXPECT_EQ(r.remote_ip, "127.0.0.1");
    connections += r.new_connections;
    bodies.insert(r.body);
  }
  EXPECT_EQ(connections, 1) << "all six pages must share one connection";
  EXPECT_EQ(results[0].new_connections, 1);
  EXPECT_EQ(bodies.size(), 6u);
  EXPECT_EQ(bodies.count(Page(3)), 1u);
  // nginx agrees: six HTTP/2.0 requests, all on one connection.
  std::string log = server_.AccessLog();
  std::set<std::string> conns;
  size_t h2_lines = 0;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    std::string line = log.substr(pos, end - pos);
    pos = end == std::string::npos ? log.size() : end + 1;
    if (line.empty()) continue;
    if (line.rfind("HTTP/2.0 ", 0) == 0) ++h2_lines;
    conns.insert(line.substr(9, line.find(' ', 9) - 9));
  }
  EXPECT_EQ(h2_lines, 6u) << log;
  EXPECT_EQ(conns.size(), 1u) << log;
}

TEST_F(Http2TlsTest, RequestHeadIsCapturedOverHttp2) {
  FetcherOptions o;
  o.config = Config(/*with_ca=*/true);
  FetchRequest req;
  req.url = server_.Url("/p2.html");
  req.keep_raw = true;
  FetchResult r = FetchOnce(o, req);
  ASSERT_EQ(r.outcome, OutcomeClass::kOk) << r.detail;
  EXPECT_EQ(r.http_version, "2");
  // HTTP/2 field names go out in lower case (RFC 9113 8.2.1); curl shows
  // the pseudo-headers as a request line and Host.
  EXPECT_EQ(r.raw_request.rfind("GET /p2.html HTTP/2\r\n", 0), 0u)
      << r.raw_request;
  EXPECT_NE(r.raw_request.find("\r\naccept-encoding: gzip, deflate, br\r\n"),
            std::string::npos)
      << r.raw_request;
  ASSERT_GE(r.raw_request.size(), 4u);
  EXPECT_EQ(r.raw_request.substr(r.raw_request.size() - 4), "\r\n\r\n");
  EXPECT_EQ(r.raw_headers.rfind("HTTP/2 200", 0), 0u) << r.raw_headers;
  EXPECT_EQ(r.raw_body, Page(2));
}

TEST_F(Http2TlsTest, WithoutTheCaVerificationFailsAsTls) {
  FetchResult r = FetchOnce(Config(/*with_ca=*/false), server_.Url("/p0.html"));
  EXPECT_EQ(r.outcome, OutcomeClass::kTls) << r.detail;
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(server_.AccessLog(), "") << "no request may reach the server";
}

TEST_F(Http2TlsTest, NameNotInTheCertificateFailsAsTls) {
  std::string url =
      "https://other.h2.test:" + std::to_string(server_.port()) + "/p0.html";
  FetchResult r = FetchOnce(Config(/*with_ca=*/true), url);
  EXPECT_EQ(r.outcome, OutcomeClass::kTls) << r.detail;
  EXPECT_EQ(server_.AccessLog(), "");
}

TEST_F(Http2TlsTest, UnreadableCaFileIsTls) {
  FetchConfig c = Config(/*with_ca=*/true);
  c.ca_file = "/nonexistent/ca.pem";
  FetchResult r = FetchOnce(c, server_.Url("/p0.html"));
  EXPECT_EQ(r.outcome, OutcomeClass::kTls) << r.detail;
}

TEST_F(Http2TlsTest, CrawlerObeysRobotsOverHttp2) {
  CrawlerOptions o;
  o.fetcher.config = Config(/*with_ca=*/true);
  o.politeness.min_delay_s = 0.01;
  boost::asio::io_context io;
  auto crawler = Crawler::Create(io, o);
  ASSERT_TRUE(crawler.ok());
  std::vector<FetchResult> results(2);
  for (int i : {0, 1}) {
    CrawlRequest req;
    req.url = server_.Url(i == 0 ? "/p1.html" : "/p5.html");
    (*crawler)->Fetch(
        req, [&results, i](FetchResult r) { results[i] = std::move(r); });
  }
  io.run();
  EXPECT_EQ(results[0].outcome, OutcomeClass::kOk) << results[0].detail;
  EXPECT_EQ(results[0].http_version, "2");
  EXPECT_EQ(results[0].body, Page(1));
  EXPECT_EQ(results[1].outcome, OutcomeClass::kRobotsDenied);
}

}  // namespace
}  // namespace freshd::fetch

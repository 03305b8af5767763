// Egress proxies (issue #44 item 5) with real parts on 127.0.0.1: a forward
// proxy written for the tests (forward_proxy.h: CONNECT tunnels, 407 on
// wrong credentials, SOCKS5) and a target site (test_server.h), driven
// through the Crawler, so robots.txt goes the way the pages go. The SSRF
// guard refuses private networks here; only the site's exact endpoint is
// exempt, so every pass shows the guard judged the pinned target address
// while the proxy's own address (also loopback) needed no exemption.

#include <sys/stat.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fetch/crawler.h"
#include "fetch_helpers.h"
#include "forward_proxy.h"
#include "gtest/gtest.h"
#include "nginx_server.h"
#include "test_server.h"

namespace freshd::fetch {
namespace {

using testing::FastFetchConfig;
using testing::ForwardProxy;
using testing::Reply;
using testing::ServerRequest;
using testing::TestServer;

constexpr char kUser[] = "crawler";
constexpr char kPassword[] = "pw-Zq81-never-logged";

Reply Site(const ServerRequest& req) {
  if (req.target == "/robots.txt") {
    return Reply::Status(200, "User-agent: *\nDisallow: /private\n");
  }
  return Reply::Html("<html><body>page " + req.target + "</body></html>");
}

// A credentials file in a fresh directory, with `mode`.
std::string CredentialsFile(const std::string& content, mode_t mode) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("freshd_proxy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "proxy.cred").string();
  std::filesystem::remove(path);
  std::ofstream(path) << content << "\n";
  ::chmod(path.c_str(), mode);
  return path;
}

// The site is reached as "site.test" ([fetch] resolve) and optionally as
// "direct.test"; private networks are refused except the site's endpoint.
CrawlerOptions Opts(const TestServer& site, const std::string& proxy,
                    const std::string& credentials_file) {
  CrawlerOptions o;
  o.fetcher.config = FastFetchConfig();
  o.fetcher.config.allow_private_networks = false;
  o.fetcher.config.resolve = {{"site.test", "127.0.0.1"},
                              {"direct.test", "127.0.0.1"}};
  o.fetcher.config.proxy = proxy;
  o.fetcher.config.proxy_credentials_file = credentials_file;
  o.fetcher.exempt_endpoints = {site.endpoint()};
  o.fetcher.user_agent = "freshd-test/1.0";
  o.product_token = "freshd-test";
  o.politeness.backoff_initial_s = 30;
  o.politeness.backoff_max_s = 60;
  o.politeness.robots_cache_s = 3600;
  return o;
}

struct CrawlOutcome {
  std::map<std::string, FetchResult> results;
  std::map<std::string, int> consecutive_errors;  // by authority
  size_t robots_entries = 0;
  std::string create_error;
};

CrawlOutcome Crawl(const CrawlerOptions& o,
                   const std::vector<std::string>& urls) {
  CrawlOutcome out;
  boost::asio::io_context io;
  auto crawler = Crawler::Create(io, o);
  if (!crawler.ok()) {
    out.create_error = crawler.status().ToString();
    return out;
  }
  for (const std::string& u : urls) {
    CrawlRequest req;
    req.url = u;
    req.keep_raw = true;
    (*crawler)->Fetch(
        req, [&out, u](FetchResult r) { out.results[u] = std::move(r); });
  }
  io.run();
  for (const std::string& u : urls) {
    const std::string authority = u.substr(7, u.find('/', 7) - 7);
    out.consecutive_errors[authority] =
        (*crawler)->gate().ConsecutiveErrors(authority);
  }
  out.robots_entries = (*crawler)->robots().size();
  return out;
}

std::string Port(const TestServer& s) { return std::to_string(s.port()); }

TEST(ProxyTest, PageAndRobotsGoThroughATunnelToThePinnedAddress) {
  TestServer site(Site);
  ForwardProxy proxy(ForwardProxy::Kind::kHttp,
                     std::string(kUser) + ":" + kPassword);
  const std::string cred =
      CredentialsFile(std::string(kUser) + ":" + kPassword, 0600);
  const std::string url = "http://site.test:" + Port(site) + "/a.html";
  CrawlOutcome out = Crawl(Opts(site, proxy.Url(), cred), {url});
  ASSERT_EQ(out.create_error, "");
  const FetchResult& r = out.results[url];
  EXPECT_EQ(r.outcome, OutcomeClass::kOk) << r.detail;
  EXPECT_NE(r.body.find("page /a.html"), std::string::npos);
  // The proxy was asked for the checked address, never for the name.
  const std::vector<std::string> connects = proxy.connects();
  ASSERT_FALSE(connects.empty());
  for (const std::string& c : connects) {
    EXPECT_EQ(c, "127.0.0.1:" + Port(site));
  }
  for (const std::string& m : proxy.methods()) EXPECT_EQ(m, "CONNECT");
  for (const std::string& a : proxy.auth_headers()) {
    EXPECT_EQ(a, "Basic " + ForwardProxy::Base64(std::string(kUser) + ":" +
                                                 kPassword));
  }
  // The site saw robots.txt and the page, both with the name as Host.
  const std::vector<ServerRequest> seen = site.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].target, "/robots.txt");
  EXPECT_EQ(seen[1].target, "/a.html");
  EXPECT_EQ(seen[1].Header("host"), "site.test:" + Port(site));
  EXPECT_EQ(seen[1].Header("proxy-authorization"), "");
  // The archived request is the one to the site: no CONNECT, no password.
  EXPECT_EQ(r.raw_request.rfind("GET /a.html ", 0), 0u) << r.raw_request;
  EXPECT_EQ(r.raw_request.find("Proxy-Authorization"), std::string::npos);
  EXPECT_EQ(r.raw_request.find(
                ForwardProxy::Base64(std::string(kUser) + ":" + kPassword)),
            std::string::npos);
  EXPECT_EQ(r.remote_ip, "127.0.0.1");
}

// https through the tunnel: CONNECT to the address, while TLS verifies the
// certificate for the name (SNI) and ALPN still negotiates HTTP/2.
TEST(ProxyTest, HttpsThroughTheTunnelVerifiesTheSiteName) {
  testing::NginxServer nginx("tls.proxy.test");
  const std::string err = nginx.Start();
  ASSERT_EQ(err, "") << "cannot run nginx: " << err;
  nginx.AddFile("robots.txt", "User-agent: *\nAllow: /\n");
  nginx.AddFile("t.html", "<html><body>tls page</body></html>\n");
  ForwardProxy proxy;
  CrawlerOptions o;
  o.fetcher.config = FastFetchConfig();
  o.fetcher.config.connect_timeout_s = 10;
  o.fetcher.config.allow_private_networks = false;
  o.fetcher.config.resolve = {{"tls.proxy.test", "127.0.0.1"}};
  o.fetcher.config.ca_file = nginx.ca_file();
  o.fetcher.config.proxy = proxy.Url();
  o.fetcher.exempt_endpoints = {"127.0.0.1:" + std::to_string(nginx.port())};
  o.product_token = "freshd-test";
  const std::string url = nginx.Url("/t.html");
  CrawlOutcome out = Crawl(o, {url});
  ASSERT_EQ(out.create_error, "");
  const FetchResult& r = out.results[url];
  EXPECT_EQ(r.outcome, OutcomeClass::kOk) << r.detail;
  EXPECT_EQ(r.http_version, "2");
  EXPECT_NE(r.body.find("tls page"), std::string::npos);
  ASSERT_FALSE(proxy.connects().empty());
  for (const std::string& c : proxy.connects()) {
    EXPECT_EQ(c, "127.0.0.1:" + std::to_string(nginx.port()));
  }
}

TEST(ProxyTest, Socks5GetsTheAddressNotTheName) {
  TestServer site(Site);
  ForwardProxy proxy(ForwardProxy::Kind::kSocks5);
  const std::string url = "http://site.test:" + Port(site) + "/s.html";
  CrawlOutcome out = Crawl(Opts(site, proxy.Url(), ""), {url});
  ASSERT_EQ(out.create_error, "");
  EXPECT_EQ(out.results[url].outcome, OutcomeClass::kOk)
      << out.results[url].detail;
  const std::vector<std::string> connects = proxy.connects();
  ASSERT_FALSE(connects.empty());
  for (const std::string& c : connects) {
    EXPECT_EQ(c, "127.0.0.1:" + Port(site));
  }
  EXPECT_EQ(site.CountTarget("/s.html"), 1u);
}

TEST(ProxyTest, TheGuardJudgesTheTargetBeforeTheProxyIsAsked) {
  TestServer site(Site);
  ForwardProxy proxy;
  CrawlerOptions o = Opts(site, proxy.Url(), "");
  o.fetcher.exempt_endpoints.clear();  // the site's address is refused now
  const std::string url = "http://site.test:" + Port(site) + "/a.html";
  CrawlOutcome out = Crawl(o, {url});
  EXPECT_EQ(out.results[url].outcome, OutcomeClass::kBlockedAddress)
      << out.results[url].detail;
  EXPECT_NE(out.results[url].detail.find("127.0.0.1:" + Port(site)),
            std::string::npos);
  EXPECT_EQ(proxy.connections(), 0);
  EXPECT_EQ(site.request_count(), 0u);
}

TEST(ProxyTest, WrongCredentialsAreTheProxysErrorNotTheHosts) {
  TestServer site(Site);
  ForwardProxy proxy(ForwardProxy::Kind::kHttp,
                     std::string(kUser) + ":" + kPassword);
  const std::string wrong = "wrong-Pw-4411";
  const std::string cred =
      CredentialsFile(std::string(kUser) + ":" + wrong, 0600);
  const std::string a = "http://site.test:" + Port(site) + "/a.html";
  const std::string b = "http://site.test:" + Port(site) + "/b.html";
  CrawlOutcome out = Crawl(Opts(site, proxy.Url(), cred), {a, b});
  ASSERT_EQ(out.create_error, "");
  for (const std::string& u : {a, b}) {
    const FetchResult& r = out.results[u];
    EXPECT_EQ(r.outcome, OutcomeClass::kProxy) << r.detail;
    EXPECT_EQ(OutcomeName(r.outcome), "proxy");
    EXPECT_NE(r.detail.find("407"), std::string::npos) << r.detail;
    EXPECT_EQ(r.detail.find(wrong), std::string::npos);
    EXPECT_FALSE(IsHostError(r.outcome, r.status));
  }
  EXPECT_GE(proxy.refused_407(), 1);
  EXPECT_EQ(site.request_count(), 0u);
  // The target host is not backed off, and its robots.txt was not recorded
  // as unreachable (it was never asked).
  EXPECT_EQ(out.consecutive_errors["site.test:" + Port(site)], 0);
  EXPECT_EQ(out.robots_entries, 0u);
}

TEST(ProxyTest, AProxyThatRefusesConnectionsIsTheProxysError) {
  TestServer site(Site);
  int closed_port = 0;
  {
    ForwardProxy gone;
    closed_port = gone.port();
  }
  const std::string url = "http://site.test:" + Port(site) + "/a.html";
  CrawlOutcome out = Crawl(
      Opts(site, "http://127.0.0.1:" + std::to_string(closed_port), ""), {url});
  EXPECT_EQ(out.results[url].outcome, OutcomeClass::kProxy)
      << out.results[url].detail;
  EXPECT_EQ(out.consecutive_errors["site.test:" + Port(site)], 0);
  EXPECT_EQ(site.request_count(), 0u);
}

TEST(ProxyTest, AHostRuleSendsItsHostDirectOrThroughAnotherProxy) {
  TestServer site(Site);
  TestServer other_site(Site);
  ForwardProxy main_proxy;
  ForwardProxy other_proxy;
  CrawlerOptions o = Opts(site, main_proxy.Url(), "");
  o.fetcher.exempt_endpoints.push_back(other_site.endpoint());
  o.fetcher.config.resolve["other.test"] = "127.0.0.1";
  std::vector<RuleConfig> rules(2);
  rules[0].host = "direct.test";
  rules[0].proxy = "direct";
  rules[1].host = "*.test";
  rules[1].proxy = other_proxy.Url();
  o.fetcher.host_proxies = HostProxiesFromRules(rules);
  const std::string direct = "http://direct.test:" + Port(site) + "/d.html";
  const std::string other = "http://other.test:" + Port(other_site) + "/o.html";
  const std::string plain = "http://site.example:" + Port(site) + "/p.html";
  o.fetcher.config.resolve["site.example"] = "127.0.0.1";
  CrawlOutcome out = Crawl(o, {direct, other, plain});
  ASSERT_EQ(out.create_error, "");
  for (const auto& [u, r] : out.results) {
    EXPECT_EQ(r.outcome, OutcomeClass::kOk) << u << ": " << r.detail;
  }
  // direct.test: robots.txt and page straight to the site, no proxy.
  // other.test: through the rule's proxy; site.example: the default one.
  const std::vector<std::string> main_connects = main_proxy.connects();
  const std::vector<std::string> other_connects = other_proxy.connects();
  ASSERT_FALSE(main_connects.empty());
  ASSERT_FALSE(other_connects.empty());
  for (const std::string& c : main_connects) {
    EXPECT_EQ(c, "127.0.0.1:" + Port(site));
  }
  for (const std::string& c : other_connects) {
    EXPECT_EQ(c, "127.0.0.1:" + Port(other_site));
  }
  EXPECT_EQ(site.CountTarget("/d.html"), 1u);
  EXPECT_EQ(site.CountTarget("/p.html"), 1u);
  EXPECT_EQ(other_site.CountTarget("/o.html"), 1u);
  EXPECT_EQ(site.CountTarget("/robots.txt"), 2u);  // direct.test, site.example
  EXPECT_EQ(other_site.CountTarget("/robots.txt"), 1u);
  // Exactly one tunnel connection a proxied origin at most: the direct
  // host's two requests never reached either proxy.
  EXPECT_LE(main_proxy.connections(), 2);
}

TEST(ProxyTest, ACredentialsFileOthersMayReadIsRefusedAtStart) {
  TestServer site(Site);
  ForwardProxy proxy;
  const std::string cred =
      CredentialsFile(std::string(kUser) + ":" + kPassword, 0644);
  CrawlOutcome out = Crawl(Opts(site, proxy.Url(), cred), {});
  EXPECT_NE(out.create_error.find("mode 0644"), std::string::npos)
      << out.create_error;
  EXPECT_NE(out.create_error.find("proxy_credentials_file"), std::string::npos);
  EXPECT_EQ(out.create_error.find(kPassword), std::string::npos);
  // 0640 is refused too; 0600 and 0400 are taken.
  ::chmod(cred.c_str(), 0640);
  EXPECT_NE(Crawl(Opts(site, proxy.Url(), cred), {}).create_error, "");
  ::chmod(cred.c_str(), 0400);
  EXPECT_EQ(Crawl(Opts(site, proxy.Url(), cred), {}).create_error, "");
  const std::string bad = CredentialsFile("no-colon-here", 0600);
  const std::string err = Crawl(Opts(site, proxy.Url(), bad), {}).create_error;
  EXPECT_NE(err.find("user:password"), std::string::npos) << err;
  EXPECT_EQ(err.find("no-colon-here"), std::string::npos);
}

}  // namespace
}  // namespace freshd::fetch

// The WebSub tests' real parts, shared, not copied (websub_test.cc, one
// node; push_cluster_test.cc, two): a hub (a real HTTP server that takes
// subscribe and unsubscribe POSTs, verifies intent with a GET to the
// callback from its own thread, and POSTs signed feed bodies) and a site
// whose Atom feed names the hub and itself in Link headers. Both listen on
// 127.0.0.1 at ephemeral ports; requests go through the fixture's AskWith.

#ifndef FRESHD_TESTS_DAEMON_WEBSUB_FIXTURE_H_
#define FRESHD_TESTS_DAEMON_WEBSUB_FIXTURE_H_

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/http_server.h"
#include "parse/url.h"
#include "tests/daemon/crawl_loop_fixture.h"

namespace freshd::daemon::testing {

inline double Now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::string HexHmacSha256(const std::string& key,
                                 const std::string& body) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac,
       &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[mac[i] >> 4]);
    out.push_back(kHex[mac[i] & 15]);
  }
  return out;
}

inline std::string Encode(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

struct Answer {
  int status = 0;  // 0: no reply
  std::string body;
};

// One request to 127.0.0.1:port (AskWith: a 15 s bound); a POST carries a
// feed, signed when `signature` is given.
inline Answer Call(uint16_t port, boost::beast::http::verb verb,
                   const std::string& target, const std::string& body = "",
                   const std::string& signature = "") {
  std::vector<std::pair<std::string, std::string>> headers;
  if (verb == boost::beast::http::verb::post) {
    headers.emplace_back("Content-Type", "application/atom+xml");
  }
  if (!signature.empty()) headers.emplace_back("X-Hub-Signature", signature);
  const std::string reply = AskWith(port, verb, target, body, headers);
  // "CODE BODY", or "ERR message".
  if (reply.size() < 3 || reply.rfind("ERR ", 0) == 0) return {};
  return {std::stoi(reply.substr(0, 3)),
          reply.size() > 4 ? reply.substr(4) : ""};
}

// "http://127.0.0.1:PORT/websub/ID" -> port and path.
inline bool SplitCallback(const std::string& url, uint16_t* port,
                          std::string* path) {
  const std::string prefix = "http://127.0.0.1:";
  if (url.rfind(prefix, 0) != 0) return false;
  const size_t slash = url.find('/', prefix.size());
  if (slash == std::string::npos) return false;
  *port = static_cast<uint16_t>(
      std::stoi(url.substr(prefix.size(), slash - prefix.size())));
  *path = url.substr(slash);
  return true;
}

// The hub: POST /hub (hub.mode, hub.topic, hub.callback, hub.secret, ...)
// answered 202; the verification GET then goes from the hub's own thread.
class TestHub {
 public:
  struct Request {
    std::string mode, topic, callback, secret, lease;
    bool verified = false;  // the callback echoed the challenge
  };

  explicit TestHub(boost::asio::io_context& io) {
    HttpServerOptions o;
    o.public_listener = true;  // form POSTs, any Host
    auto s = HttpServer::Listen(
        io, "127.0.0.1:0",
        [this](const HttpRequest& r) {
          if (r.method != "POST" || r.target != "/hub") {
            return HttpReply{404, "text/plain", "no"};
          }
          Request q;
          q.mode = parse::FormValue(r.body, "hub.mode").value_or("");
          q.topic = parse::FormValue(r.body, "hub.topic").value_or("");
          q.callback = parse::FormValue(r.body, "hub.callback").value_or("");
          q.secret = parse::FormValue(r.body, "hub.secret").value_or("");
          q.lease = parse::FormValue(r.body, "hub.lease_seconds").value_or("");
          {
            std::lock_guard<std::mutex> lock(mu_);
            requests_.push_back(q);
            jobs_.push_back(requests_.size() - 1);
          }
          cv_.notify_one();
          return HttpReply{202, "text/plain", ""};
        },
        o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok()) server_ = std::move(s).value();
    worker_ = std::thread([this] { Work(); });
  }
  ~TestHub() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    worker_.join();
  }
  TestHub(const TestHub&) = delete;
  TestHub& operator=(const TestHub&) = delete;

  std::string Url() const {
    return "http://hub.test:" + std::to_string(server_->port()) + "/hub";
  }

  std::atomic<int> lease_granted{3600};
  std::atomic<int> verified{0};        // challenges echoed
  std::atomic<int> refused_verify{0};  // verifications not echoed
  std::atomic<int> unsubscribed{0};    // unsubscribe verified

  std::vector<Request> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  int Count(const std::string& mode) {
    int n = 0;
    for (const Request& r : requests()) n += r.mode == mode;
    return n;
  }
  // The first request of `mode` whose callback starts with `prefix` and
  // whose intent was verified (false: none).
  bool Verified(const std::string& mode, const std::string& prefix,
                Request* out = nullptr) {
    for (const Request& r : requests()) {
      if (r.mode == mode && r.verified && r.callback.rfind(prefix, 0) == 0) {
        if (out != nullptr) *out = r;
        return true;
      }
    }
    return false;
  }
  // POSTs `body` to `callback`, signed with `secret` (empty: no header).
  // The HTTP status, 0 for none.
  static int PublishTo(const std::string& callback, const std::string& body,
                       const std::string& secret) {
    uint16_t port = 0;
    std::string path;
    if (!SplitCallback(callback, &port, &path)) return 0;
    return Call(port, boost::beast::http::verb::post, path, body,
                secret.empty() ? "" : "sha256=" + HexHmacSha256(secret, body))
        .status;
  }
  // The same to the first subscriber's callback.
  int Publish(const std::string& body, const std::string& secret) {
    std::vector<Request> r = requests();
    if (r.empty()) return 0;
    return PublishTo(r.front().callback, body, secret);
  }
  std::string Secret() {
    std::vector<Request> r = requests();
    return r.empty() ? "" : r.front().secret;
  }
  std::string Callback() {
    std::vector<Request> r = requests();
    return r.empty() ? "" : r.front().callback;
  }

 private:
  void Work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      const size_t job = jobs_.front();
      jobs_.pop_front();
      const Request q = requests_[job];
      lock.unlock();
      uint16_t port = 0;
      std::string path;
      const std::string challenge = "c" + std::to_string(++challenges_);
      bool ok = false;
      if (SplitCallback(q.callback, &port, &path)) {
        std::string target = path + "?hub.mode=" + q.mode +
                             "&hub.topic=" + Encode(q.topic) +
                             "&hub.challenge=" + challenge;
        if (q.mode == "subscribe") {
          target += "&hub.lease_seconds=" + std::to_string(lease_granted);
        }
        Answer a = Call(port, boost::beast::http::verb::get, target);
        ok = a.status == 200 && a.body == challenge;
      }
      lock.lock();
      requests_[job].verified = ok;
      if (ok) {
        ++verified;
        if (q.mode == "unsubscribe") ++unsubscribed;
      } else {
        ++refused_verify;
      }
    }
  }

  std::unique_ptr<HttpServer> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Request> requests_;
  std::deque<size_t> jobs_;  // indexes in requests_ to verify
  bool stop_ = false;
  int challenges_ = 0;
  std::thread worker_;
};

// A site on 127.0.0.1 named by `name` (given its port: a test may choose
// the name whose shard a node owns), "s.test" by default: "/" links its
// Atom feed; the feed names the hub and itself in Link headers; every
// other path is a page, each GET counted. Add the name to [fetch] resolve.
class FeedSite {
 public:
  using NameFn = std::function<std::string(uint16_t port)>;
  FeedSite(
      boost::asio::io_context& io, const std::string& hub,
      const NameFn& name = [](uint16_t) { return "s.test"; }) {
    HttpServerOptions o;
    o.public_listener = true;  // Host: NAME:PORT
    auto s = HttpServer::Listen(
        io, "127.0.0.1:0",
        [this, hub](const HttpRequest& r) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            ++gets_[r.target];
          }
          if (r.target == "/") {
            return HttpReply{
                200, "text/html",
                "<html><head><link rel=alternate type=application/atom+xml "
                "href=/feed.xml></head><body><a href=/a>a</a></body></html>"};
          }
          if (r.target == "/feed.xml") {
            // No longer a feed (a 5xx would back the host off for long).
            if (feed_fails) {
              return HttpReply{200, "text/html", "<html><body>gone</body>"};
            }
            HttpReply reply{200, "application/atom+xml",
                            Feed({"a"}, "2026-11-20T10:00:00Z")};
            reply.headers.emplace_back("Link", "<" + hub + ">; rel=\"hub\", <" +
                                                   root_ +
                                                   "feed.xml>; rel=\"self\"");
            return reply;
          }
          return HttpReply{200, "text/html", "<html><body>x</body></html>"};
        },
        o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return;
    server_ = std::move(s).value();
    name_ = name(server_->port());
    root_ = "http://" + name_ + ":" + std::to_string(server_->port()) + "/";
  }
  const std::string& name() const { return name_; }
  const std::string& root() const { return root_; }
  uint16_t port() const { return server_->port(); }
  // An Atom feed of these paths, all dated `updated`.
  std::string Feed(const std::vector<std::string>& paths,
                   const std::string& updated) const {
    std::string x = "<feed xmlns=\"http://www.w3.org/2005/Atom\">";
    for (const std::string& p : paths) {
      x += "<entry><link href=\"" + root_ + p + "\"/><updated>" + updated +
           "</updated></entry>";
    }
    return x + "</feed>";
  }
  int Gets(const std::string& target) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = gets_.find(target);
    return it == gets_.end() ? 0 : it->second;
  }
  std::atomic<bool> feed_fails{false};

 private:
  std::unique_ptr<HttpServer> server_;
  std::string name_, root_;
  std::mutex mu_;
  std::map<std::string, int> gets_;
};

}  // namespace freshd::daemon::testing

#endif  // FRESHD_TESTS_DAEMON_WEBSUB_FIXTURE_H_

// PushListener: the address sites reach freshd at ([push] listen), apart
// from the loopback status endpoint, on its own thread and io_context.
// It serves the IndexNow receiver's route:
//   GET  /indexnow?url=U&key=K[&keyLocation=L]
//   POST /indexnow  {"host", "key", "keyLocation"?, "urlList": [...]}
// and, given WebSub subscriptions (daemon/websub_subscriptions.h), their
// callbacks:
//   GET  /websub/ID?hub.mode=...  verification of intent (the challenge,
//                                 text/plain, or 404)
//   POST /websub/ID               content distribution (X-Hub-Signature;
//                                 202, or 410 for an unknown ID)
// (an ID not of the callback form: 404 at once), and nothing of status,
// metrics or control (any other path: 404; another method: 405). The server is
// HttpServer with its bounds (deadlines, connection caps, body size, JSON 4xx)
// and without the status endpoint's access rules
// (HttpServerOptions::public_listener). For each request, on this thread: the
// client (TrustedProxies: the peer, or what a trusted proxy's X-Forwarded-For
// names), its per-minute limit (ClientRateLimiter: 429 with Retry-After, before
// anything else), the parse (parse/indexnow_request.h: 400, 422); then the ping
// is posted to the receiver's thread (IndexNowReceiver::Receive) and the reply
// posted back; a WebSub callback likewise to the subscriptions' thread (the
// same). Started once the crawl loop exists (connections are refused while the
// store is recovered); read from the config at start only.
// Thread-safety: create and destroy on one thread; the receiver, the
// subscriptions and their io_context must outlive the listener (destroy
// the listener first).

#ifndef FRESHD_DAEMON_PUSH_LISTENER_H_
#define FRESHD_DAEMON_PUSH_LISTENER_H_

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "daemon/http_server.h"
#include "daemon/indexnow_receiver.h"
#include "daemon/push_clients.h"
#include "daemon/websub_subscriptions.h"

namespace freshd::daemon {

// Clients whose buckets are kept at once (ClientRateLimiter).
inline constexpr size_t kMaxPushClients = 65536;

class PushListener {
 public:
  struct Options {
    std::string listen;  // "ADDRESS:PORT" (port 0: ephemeral)
    HttpServerOptions http;
    std::vector<std::string> trusted_proxies;
    int client_requests_per_minute = 60;
    size_t max_clients = kMaxPushClients;
  };
  // [push] as Options.
  static Options OptionsFromConfig(const PushConfig& push);

  // Listens and starts the thread. InvalidArgument for bad options (a bad
  // CIDR), IOError when it cannot bind. `websub` may be null (no /websub/).
  static Result<std::unique_ptr<PushListener>> Start(
      boost::asio::io_context& receiver_io, IndexNowReceiver* receiver,
      Options options, WebSubSubscriptions* websub = nullptr);
  ~PushListener();  // stops listening, drops replies not yet written, joins

  uint16_t port() const { return port_; }

 private:
  struct Channel;
  PushListener(boost::asio::io_context& receiver_io, IndexNowReceiver* receiver,
               WebSubSubscriptions* websub, Options options,
               TrustedProxies proxies);
  bool Handle(const HttpRequest& request,
              std::function<void(HttpReply)> respond);
  // A /websub/ID request (path already matched).
  void HandleWebSub(const HttpRequest& request, std::string_view id,
                    std::string_view query,
                    std::function<void(HttpReply)> respond);
  // Runs `work` on the receiver's thread (unless `alive` went false) and
  // writes its reply back from this thread.
  void Forward(std::shared_ptr<bool> alive, std::function<HttpReply()> work,
               std::function<void(HttpReply)> respond);

  boost::asio::io_context& receiver_io_;
  IndexNowReceiver* const receiver_;
  WebSubSubscriptions* const websub_;  // may be null
  const Options options_;
  const TrustedProxies proxies_;

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work_;
  // The way back from the receiver's thread (cut by the destructor).
  std::shared_ptr<Channel> channel_;
  // This thread's: the limiter, the replies awaited from the receiver.
  ClientRateLimiter limiter_;
  uint64_t next_id_ = 0;
  std::map<uint64_t, std::function<void(HttpReply)>> awaiting_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PUSH_LISTENER_H_

// StatusService: the status endpoint on its own thread (daemon/README.md),
// so it answers within milliseconds however busy the crawl is. Each request
// is handed to the CrawlLoop's thread (RouteStatusRequest runs there, where
// the state lives, without locks); a GET /status that gets no answer within
// kFreshWaitS is answered from the loop's last snapshot (at most about a
// second old, marked "snapshot_age_s"); other requests wait up to
// kSlowWaitS, then get 503. GET /changes (daemon/change_feed.h) is served
// on this thread from the store, its long polls on this thread's timers.
// Started before the loop exists (StartRecovering, while CrawlLoop::Create
// recovers the store), it answers from a RecoveryProgress instead
// (RouteRecoveringRequest: /status says "recovering", the rest 503) until
// Attach hands it the loop; same listener, same access rules.
// Thread-safety: create, Attach and destroy on one thread; the loop must
// outlive the service (destroy the service first), the progress too.

#ifndef FRESHD_DAEMON_STATUS_SERVICE_H_
#define FRESHD_DAEMON_STATUS_SERVICE_H_

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "daemon/crawl_loop.h"
#include "daemon/http_server.h"
#include "daemon/recovery.h"

namespace freshd::daemon {

inline constexpr double kFreshWaitS = 0.02;
inline constexpr double kSlowWaitS = 5;

class StatusService {
 public:
  // Listens on `listen` ("ADDRESS:PORT", port 0: ephemeral) and starts the
  // thread. Errors as HttpServer::Listen.
  static Result<std::unique_ptr<StatusService>> Start(
      CrawlLoop& loop, const std::string& listen,
      HttpServerOptions options = {});
  // The same with no loop yet: answers from `progress` until Attach.
  static Result<std::unique_ptr<StatusService>> StartRecovering(
      const RecoveryProgress& progress, const std::string& listen,
      HttpServerOptions options = {});
  // From now on requests go to `loop` (once; the status thread sees it at
  // its next request).
  void Attach(CrawlLoop& loop) {
    loop_.store(&loop, std::memory_order_release);
  }
  ~StatusService();  // stops listening and joins the thread

  uint16_t port() const { return port_; }

 private:
  StatusService();
  static Result<std::unique_ptr<StatusService>> Listen(
      CrawlLoop* loop, const RecoveryProgress* progress,
      const std::string& listen, HttpServerOptions options);
  HttpReply Handle(const HttpRequest& request);

  std::atomic<CrawlLoop*> loop_{nullptr};
  const RecoveryProgress* progress_ = nullptr;  // set before the thread starts

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_STATUS_SERVICE_H_

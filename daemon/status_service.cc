#include "daemon/status_service.h"

#include <boost/asio/post.hpp>
#include <chrono>
#include <future>
#include <string_view>
#include <utility>

#include "base/clock.h"
#include "daemon/change_feed.h"
#include "daemon/status_routes.h"

namespace freshd::daemon {
namespace {

std::chrono::microseconds Micros(double seconds) {
  return std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

}  // namespace

StatusService::StatusService() : work_(io_.get_executor()) {}

Result<std::unique_ptr<StatusService>> StatusService::Start(
    CrawlLoop& loop, const std::string& listen, HttpServerOptions options) {
  return Listen(&loop, nullptr, listen, std::move(options));
}

Result<std::unique_ptr<StatusService>> StatusService::StartRecovering(
    const RecoveryProgress& progress, const std::string& listen,
    HttpServerOptions options) {
  return Listen(nullptr, &progress, listen, std::move(options));
}

Result<std::unique_ptr<StatusService>> StatusService::Listen(
    CrawlLoop* initial, const RecoveryProgress* progress,
    const std::string& listen, HttpServerOptions options) {
  std::unique_ptr<StatusService> service(new StatusService());
  StatusService* self = service.get();
  self->loop_.store(initial, std::memory_order_release);
  self->progress_ = progress;
  // GET /changes is served here, on the status thread, from the store: a
  // long poll waits on this thread's timers, never on the loop's.
  auto changes = [self](const HttpRequest& r,
                        std::function<void(HttpReply)> respond) {
    const size_t q = r.target.find('?');
    if (std::string_view(r.target).substr(0, q) != "/changes") return false;
    CrawlLoop* loop = self->loop_.load(std::memory_order_acquire);
    if (loop == nullptr) return false;  // recovering: Handle answers 503
    if (r.method != "GET" && r.method != "HEAD") {
      respond(HttpReply{405, "application/json",
                        R"({"error": "use GET"})"
                        "\n"});
      return true;
    }
    ServeChanges(self->io_, loop->store(),
                 q == std::string::npos
                     ? std::string_view()
                     : std::string_view(r.target).substr(q + 1),
                 std::move(respond));
    return true;
  };
  auto server = HttpServer::Listen(
      service->io_, listen,
      [self](const HttpRequest& r) { return self->Handle(r); },
      std::move(options), std::move(changes));
  if (!server.ok()) return server.status();
  service->server_ = std::move(server).value();
  service->port_ = service->server_->port();
  service->thread_ = std::thread([self] { self->io_.run(); });
  return service;
}

StatusService::~StatusService() {
  // The server belongs to the status thread: it is closed there, and open
  // connections go with the io_context.
  boost::asio::post(io_, [this] {
    server_.reset();
    io_.stop();
  });
  work_.reset();
  if (thread_.joinable()) thread_.join();
}

HttpReply StatusService::Handle(const HttpRequest& request) {
  CrawlLoop* attached = loop_.load(std::memory_order_acquire);
  if (attached == nullptr) {
    static const RecoveryProgress kNone;
    return RouteRecoveringRequest(progress_ != nullptr ? *progress_ : kNone,
                                  request, UnixNow());
  }
  CrawlLoop& loop = *attached;
  auto reply = std::make_shared<std::promise<HttpReply>>();
  std::future<HttpReply> answer = reply->get_future();
  // A state-changing request is answered once what it changed is durable.
  const bool changes_state = request.method == "POST";
  boost::asio::post(loop.io(), [&loop, request, reply, changes_state] {
    HttpReply r = RouteStatusRequest(loop, request);
    if (!changes_state || r.status != 200) return reply->set_value(r);
    loop.WhenCommitted([reply, r](Status committed) {
      reply->set_value(committed.ok()
                           ? r
                           : HttpReply{500, "application/json",
                                       R"({"error": "not committed"})"});
    });
  });
  const std::string_view path =
      std::string_view(request.target).substr(0, request.target.find('?'));
  const bool status = request.method == "GET" && path == "/status";
  if (answer.wait_for(Micros(status ? kFreshWaitS : kSlowWaitS)) ==
      std::future_status::ready) {
    return answer.get();
  }
  if (status) {
    if (auto snapshot = loop.status_snapshot()) {
      nlohmann::json j = *snapshot;
      j["snapshot_age_s"] = UnixNow() - j.value("snapshot_unix", UnixNow());
      return HttpReply{200, "application/json", j.dump()};
    }
  }
  return HttpReply{503, "application/json",
                   R"({"error": "the crawl loop is busy; try again"})"};
}

}  // namespace freshd::daemon

#include "daemon/push_listener.h"

#include <boost/asio/post.hpp>
#include <chrono>
#include <mutex>
#include <string_view>
#include <utility>

#include "daemon/json_reply.h"
#include "parse/indexnow_request.h"

namespace freshd::daemon {
namespace {

double SteadyNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

HttpReply Error(int status, const std::string& message) {
  return JsonReply(status, {{"error", message}});
}

}  // namespace

// The receiver's thread posts replies back through this; the destructor
// cuts it (under the lock) before the io_context goes.
struct PushListener::Channel {
  std::mutex mu;
  boost::asio::io_context* io = nullptr;
  PushListener* listener = nullptr;
};

PushListener::Options PushListener::OptionsFromConfig(const PushConfig& push) {
  Options o;
  o.listen = push.listen;
  o.http.max_connections = push.max_connections;
  o.http.max_connections_per_client = push.max_connections_per_client;
  o.http.header_timeout_s = push.header_timeout_s;
  o.http.body_timeout_s = push.body_timeout_s;
  o.http.max_body_bytes = push.max_body_bytes;
  o.trusted_proxies = push.trusted_proxies;
  o.client_requests_per_minute = push.client_requests_per_minute;
  return o;
}

PushListener::PushListener(boost::asio::io_context& receiver_io,
                           IndexNowReceiver* receiver,
                           WebSubSubscriptions* websub, Options options,
                           TrustedProxies proxies)
    : receiver_io_(receiver_io),
      receiver_(receiver),
      websub_(websub),
      options_(std::move(options)),
      proxies_(std::move(proxies)),
      work_(io_.get_executor()),
      channel_(std::make_shared<Channel>()),
      limiter_(options_.client_requests_per_minute, options_.max_clients) {
  channel_->io = &io_;
  channel_->listener = this;
}

Result<std::unique_ptr<PushListener>> PushListener::Start(
    boost::asio::io_context& receiver_io, IndexNowReceiver* receiver,
    Options options, WebSubSubscriptions* websub) {
  auto proxies = TrustedProxies::Create(options.trusted_proxies);
  if (!proxies.ok()) return proxies.status();
  if (options.client_requests_per_minute < 1) {
    return Status::InvalidArgument(
        "[push] client_requests_per_minute must be at least 1");
  }
  options.http.public_listener = true;
  options.http.token.clear();
  options.http.allowed_hosts.clear();
  HttpServerOptions http = options.http;
  const std::string listen = options.listen;
  std::unique_ptr<PushListener> self(
      new PushListener(receiver_io, receiver, websub, std::move(options),
                       std::move(proxies).value()));
  PushListener* raw = self.get();
  auto server = HttpServer::Listen(
      self->io_, listen,
      [](const HttpRequest&) { return Error(404, "no such endpoint"); }, http,
      [raw](const HttpRequest& r, std::function<void(HttpReply)> respond) {
        return raw->Handle(r, std::move(respond));
      });
  if (!server.ok()) return server.status();
  self->server_ = std::move(server).value();
  self->port_ = self->server_->port();
  self->thread_ = std::thread([raw] { raw->io_.run(); });
  return self;
}

PushListener::~PushListener() {
  {
    std::lock_guard<std::mutex> lock(channel_->mu);
    channel_->io = nullptr;
    channel_->listener = nullptr;
  }
  // The server and the replies awaited belong to this thread: dropped
  // there, and open connections go with the io_context.
  boost::asio::post(io_, [this] {
    awaiting_.clear();
    server_.reset();
    io_.stop();
  });
  work_.reset();
  if (thread_.joinable()) thread_.join();
}

bool PushListener::Handle(const HttpRequest& request,
                          std::function<void(HttpReply)> respond) {
  const std::string_view target = request.target;
  const size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string client =
      proxies_.ClientOf(request.peer, request.forwarded_for);
  if (!limiter_.Allow(client, SteadyNow())) {
    if (path == "/indexnow") {
      receiver_->Refused(IndexNowReceiver::Refusal::kClientRate);
    }
    HttpReply reply = Error(429, "too many requests from " + client);
    reply.headers.emplace_back("Retry-After", "60");
    respond(std::move(reply));
    return true;
  }
  if (path.starts_with(kWebSubPath) && websub_ != nullptr) {
    HandleWebSub(
        request, path.substr(kWebSubPath.size()),
        q == std::string_view::npos ? std::string_view() : target.substr(q + 1),
        std::move(respond));
    return true;
  }
  if (path != "/indexnow") return false;  // 404
  parse::IndexNowParse parsed;
  if (request.method == "GET") {
    parsed = parse::ParseIndexNowQuery(q == std::string_view::npos
                                           ? std::string_view()
                                           : target.substr(q + 1));
  } else if (request.method == "POST") {
    parsed = parse::ParseIndexNowJson(request.content_type, request.body);
  } else {
    respond(Error(405, "use GET or POST"));
    return true;
  }
  if (!parsed.ok()) {
    receiver_->Refused(parsed.status == 422
                           ? IndexNowReceiver::Refusal::kNotOnHost
                           : IndexNowReceiver::Refusal::kMalformed);
    respond(Error(parsed.status, parsed.error));
    return true;
  }
  Forward(
      receiver_->alive(),
      [receiver = receiver_, ping = std::move(parsed.request)]() mutable {
        IndexNowReceiver::Reply r = receiver->Receive(std::move(ping));
        HttpReply reply = JsonReply(r.status, r.body);
        if (r.status == 429) reply.headers.emplace_back("Retry-After", "60");
        return reply;
      },
      std::move(respond));
  return true;
}

void PushListener::HandleWebSub(const HttpRequest& request, std::string_view id,
                                std::string_view query,
                                std::function<void(HttpReply)> respond) {
  if (request.method != "GET" && request.method != "POST") {
    respond(Error(405, "use GET or POST"));
    return;
  }
  if (!WebSubSubscriptions::WellFormedId(id)) {
    websub_->NoteUnknownCallback();
    respond(Error(404, "no such subscription"));
    return;
  }
  const auto text = [](WebSubSubscriptions::Reply r) {
    HttpReply reply;
    reply.status = r.status;
    reply.content_type = "text/plain";
    reply.body = std::move(r.body);
    return reply;
  };
  if (request.method == "GET") {
    Forward(
        websub_->alive(),
        [websub = websub_, id = std::string(id), query = std::string(query),
         text] { return text(websub->Verify(id, query)); },
        std::move(respond));
    return;
  }
  Forward(
      websub_->alive(),
      [websub = websub_, id = std::string(id),
       signature = request.hub_signature, body = request.body, text]() mutable {
        return text(websub->Deliver(id, signature, std::move(body)));
      },
      std::move(respond));
}

void PushListener::Forward(std::shared_ptr<bool> alive,
                           std::function<HttpReply()> work,
                           std::function<void(HttpReply)> respond) {
  const uint64_t id = next_id_++;
  awaiting_.emplace(id, std::move(respond));
  boost::asio::post(receiver_io_, [alive = std::move(alive), channel = channel_,
                                   id, work = std::move(work)]() mutable {
    if (!*alive) return;  // the receiver is gone; so is the reply
    HttpReply reply = work();
    std::lock_guard<std::mutex> lock(channel->mu);
    if (channel->io == nullptr) return;
    boost::asio::post(*channel->io,
                      [channel, id, reply = std::move(reply)]() mutable {
                        PushListener* self = nullptr;
                        {
                          std::lock_guard<std::mutex> lock(channel->mu);
                          self = channel->listener;
                        }
                        if (self == nullptr)
                          return;  // being destroyed (joins this thread)
                        auto it = self->awaiting_.find(id);
                        if (it == self->awaiting_.end()) return;
                        auto respond = std::move(it->second);
                        self->awaiting_.erase(it);
                        respond(std::move(reply));
                      });
  });
}

}  // namespace freshd::daemon

#include "daemon/http_server.h"

#include <array>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <chrono>
#include <fstream>
#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "base/ascii.h"

namespace freshd::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// After an error reply the server reads and discards what the client still
// sends, so that closing does not reset the connection before the client
// read the reply; bounded in bytes and time.
constexpr size_t kMaxDrainBytes = 16 << 20;
constexpr auto kDrainTime = std::chrono::seconds(2);
// Connections answered 503/429 at once, beyond which new ones are closed.
constexpr int kMaxRefusing = 16;

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

std::string_view Sv(beast::string_view s) { return {s.data(), s.size()}; }

std::string ErrorBody(const std::string& message) {
  return nlohmann::json{{"error", message}}.dump() + "\n";
}

// The host part of a Host header value or an authority ("name", "name:port",
// "1.2.3.4:port", "[::1]:port"), brackets removed; nullopt if malformed.
std::optional<std::string> HostPart(std::string_view authority) {
  if (authority.empty()) return std::nullopt;
  std::string_view host = authority;
  std::string_view port;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
    }
  } else if (size_t colon = authority.find(':');
             colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return AsciiLowerCopy(host);
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

}  // namespace

bool IsLoopbackLiteral(const std::string& ip) {
  beast::error_code ec;
  asio::ip::address a = asio::ip::make_address(ip, ec);
  if (ec) return false;
  if (a.is_v4()) return a.to_v4().is_loopback();
  asio::ip::address_v6 v6 = a.to_v6();
  if (v6.is_loopback()) return true;
  return v6.is_v4_mapped() &&
         asio::ip::make_address_v4(asio::ip::v4_mapped, v6).is_loopback();
}

bool IsLoopbackListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return IsLoopbackLiteral(host);
}

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open token file");
  std::string line;
  std::getline(in, line);
  if (in.bad()) return Status::IOError(path + ": read failed");
  std::string_view token = line;
  while (!token.empty() &&
         std::isspace(static_cast<unsigned char>(token.back()))) {
    token.remove_suffix(1);
  }
  while (!token.empty() &&
         std::isspace(static_cast<unsigned char>(token.front()))) {
    token.remove_prefix(1);
  }
  if (token.size() < 16 || token.size() > 4096) {
    return Status::InvalidArgument(
        path + ": token must be 16 to 4096 characters on the first line");
  }
  for (char c : token) {
    if (c <= 0x20 || c >= 0x7f) {
      return Status::InvalidArgument(
          path + ": token must be printable ASCII without spaces");
    }
  }
  return std::string(token);
}

class HttpServer::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::io_context& io, Handler handler, HttpServerOptions options,
       AsyncHandler async)
      : acceptor_(io),
        retry_timer_(io),
        handler_(std::move(handler)),
        async_(std::move(async)),
        options_(std::move(options)) {
    for (std::string& h : options_.allowed_hosts) h = AsciiLowerCopy(h);
  }

  Status Open(const std::string& listen) {
    Status bad = Status::InvalidArgument(
        "listen address must be IP:PORT (or [IPv6]:PORT), got " + listen);
    size_t colon = listen.rfind(':');
    if (colon == std::string::npos) return bad;
    std::string host = listen.substr(0, colon);
    std::string digits = listen.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    beast::error_code ec;
    asio::ip::address ip = asio::ip::make_address(host, ec);
    if (ec || digits.empty() || digits.size() > 5 ||
        digits.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(digits) > 65535) {
      return bad;
    }
    if (options_.max_connections < 1 ||
        options_.max_connections_per_client < 1 ||
        options_.header_timeout_s <= 0 || options_.body_timeout_s <= 0 ||
        options_.write_timeout_s <= 0 || options_.max_header_bytes < 256) {
      return Status::InvalidArgument("http server: invalid options");
    }
    loopback_ = IsLoopbackLiteral(host);
    if (!loopback_ && options_.token.empty() && !options_.public_listener) {
      return Status::InvalidArgument(
          "refusing to serve the status endpoint on non-loopback address " +
          listen + " without a bearer token ([status] token_file)");
    }
    listen_ip_ = ip;
    auto port = static_cast<uint16_t>(std::stoul(digits));
    tcp::endpoint ep(ip, port);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return Status::IOError("cannot listen on " + listen + ": " +
                             ec.message());
    }
    return Status::OK();
  }

  void Accept() {
    acceptor_.async_accept(
        [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
          if (!self->acceptor_.is_open()) return;
          if (ec) {
            // Out of descriptors and the like: retry shortly, not in a spin.
            self->retry_timer_.expires_after(std::chrono::milliseconds(100));
            self->retry_timer_.async_wait(
                [self](beast::error_code) { self->Accept(); });
            return;
          }
          self->Admit(std::move(socket));
          self->Accept();
        });
  }

  void Close() {
    beast::error_code ignored;
    acceptor_.close(ignored);
    retry_timer_.cancel();
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  class Session;
  friend class Session;

  void Admit(tcp::socket socket) {
    beast::error_code ec;
    tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) return;
    std::string client = peer.address().to_string();
    int status = 0;
    if (per_client_[client] >= options_.max_connections_per_client &&
        !EvictOldestIdle(&client)) {
      status = 429;
    } else if (open_ >= options_.max_connections && !EvictOldestIdle(nullptr)) {
      status = 503;
    }
    if (per_client_[client] == 0 && status != 0) per_client_.erase(client);
    auto session = std::make_shared<Session>(std::move(socket), client,
                                             shared_from_this());
    if (status == 0) {
      session->Start();
    } else if (refusing_ < kMaxRefusing) {
      session->Refuse(status);
    }
  }

  // Closes the connection (of `client`, or any) that has waited longest for
  // a request header or is draining; false if there is none.
  bool EvictOldestIdle(const std::string* client) {
    Session* oldest = nullptr;
    for (Session* s : sessions_) {
      if (!s->idle() || (client != nullptr && s->client() != *client)) continue;
      if (oldest == nullptr || s->idle_since() < oldest->idle_since()) {
        oldest = s;
      }
    }
    if (oldest == nullptr) return false;
    oldest->Evict();
    return true;
  }

  void Register(Session* s) {
    sessions_.push_back(s);
    ++open_;
    ++per_client_[s->client()];
  }

  void Unregister(Session* s) {
    sessions_.remove(s);
    --open_;
    if (--per_client_[s->client()] <= 0) per_client_.erase(s->client());
  }

  // Whether a Host value (or an Origin's authority) names this server.
  bool HostAllowed(std::string_view authority) const {
    std::optional<std::string> host = HostPart(authority);
    if (!host) return false;
    if (*host == "localhost" || IsLoopbackLiteral(*host)) return true;
    for (const std::string& name : options_.allowed_hosts) {
      if (*host == name) return true;
    }
    beast::error_code ec;
    asio::ip::address ip = asio::ip::make_address(*host, ec);
    if (ec) return false;
    return listen_ip_.is_unspecified() || ip == listen_ip_;
  }

  // Checks a request's header against the access rules; the error reply's
  // status and message, or 0 when it may proceed.
  std::pair<int, std::string> CheckAccess(
      const http::request_parser<http::string_body>& parser) const {
    const auto& req = parser.get();
    auto host = req.find(http::field::host);
    if (host == req.end()) {
      if (req.version() >= 11) return {400, "HTTP/1.1 request without Host"};
    }
    if (options_.public_listener) return {0, {}};
    if (host != req.end() && !HostAllowed(TrimAsciiBlanks(Sv(host->value())))) {
      return {421, "Host \"" + std::string(Sv(host->value())) +
                       "\" is not this server (loopback, localhost or "
                       "[status] allowed_hosts)"};
    }
    const bool safe =
        req.method() == http::verb::get || req.method() == http::verb::head;
    if (!options_.token.empty() && (!safe || !loopback_)) {
      std::string_view auth = Sv(req[http::field::authorization]);
      constexpr std::string_view kBearer = "bearer ";
      if (auth.size() <= kBearer.size() ||
          AsciiLowerCopy(auth.substr(0, kBearer.size())) != kBearer ||
          !ConstantTimeEqual(TrimAsciiBlanks(auth.substr(kBearer.size())),
                             options_.token)) {
        return {401, "a valid \"Authorization: Bearer <token>\" is required"};
      }
    }
    // A foreign Origin is refused on every method: a browser sends one on a
    // page's cross-origin fetch of a GET too, and nothing here serves
    // another site's pages.
    auto origin = req.find(http::field::origin);
    if (origin != req.end()) {
      std::string_view o = TrimAsciiBlanks(Sv(origin->value()));
      size_t sep = o.find("://");
      std::string scheme =
          sep == std::string_view::npos ? "" : AsciiLowerCopy(o.substr(0, sep));
      bool ok = (scheme == "http" || scheme == "https") &&
                HostAllowed(o.substr(sep + 3));
      if (!ok) {
        return {403, "cross-origin request refused (Origin \"" +
                         std::string(o) + "\")"};
      }
    }
    if (safe) return {0, {}};
    std::string_view type = Sv(req[http::field::content_type]);
    if (AsciiLowerCopy(TrimAsciiBlanks(type.substr(0, type.find(';')))) !=
        "application/json") {
      return {415, "Content-Type must be application/json"};
    }
    return {0, {}};
  }

  class Session : public std::enable_shared_from_this<Session> {
   public:
    Session(tcp::socket socket, std::string client,
            std::shared_ptr<Impl> server)
        : stream_(std::move(socket)),
          client_(std::move(client)),
          server_(std::move(server)) {}
    ~Session() {
      if (registered_) server_->Unregister(this);
      if (refusing_) --server_->refusing_;
    }

    const std::string& client() const { return client_; }
    bool idle() const { return idle_; }
    Clock::time_point idle_since() const { return idle_since_; }

    void Start() {
      server_->Register(this);
      registered_ = true;
      ReadHeader();
    }

    // Answers `status` and closes: over a connection cap.
    void Refuse(int status) {
      refusing_ = true;
      ++server_->refusing_;
      WriteError(status, status == 429
                             ? "too many connections from this address"
                             : "too many connections");
    }

    // Closes at once (to make room under a cap); the pending operation
    // ends with operation_aborted and the session with it.
    void Evict() {
      if (registered_) server_->Unregister(this);
      registered_ = false;
      idle_ = false;
      stream_.close();
    }

   private:
    const HttpServerOptions& options() const { return server_->options_; }

    void SetIdle(bool idle) {
      idle_ = idle;
      if (idle) idle_since_ = Clock::now();
    }

    void ReadHeader() {
      parser_.emplace();
      parser_->header_limit(options().max_header_bytes);
      parser_->body_limit(options().max_body_bytes);
      SetIdle(true);
      stream_.expires_after(Millis(options().header_timeout_s));
      http::async_read_header(
          stream_, buffer_, *parser_,
          [self = shared_from_this()](beast::error_code ec, size_t) {
            self->SetIdle(false);
            if (ec) return self->OnReadError(ec);
            self->OnHeader();
          });
    }

    void OnHeader() {
      auto [status, message] = server_->CheckAccess(*parser_);
      if (status != 0) return WriteError(status, message);
      if (parser_->is_done()) return Respond();
      stream_.expires_after(Millis(options().body_timeout_s));
      if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
        continue_.emplace(http::status::continue_, 11);
        http::async_write(
            stream_, *continue_,
            [self = shared_from_this()](beast::error_code ec, size_t) {
              if (ec) return;
              self->ReadBody();
            });
        return;
      }
      ReadBody();
    }

    void ReadBody() {
      http::async_read(
          stream_, buffer_, *parser_,
          [self = shared_from_this()](beast::error_code ec, size_t) {
            if (ec) return self->OnReadError(ec);
            self->Respond();
          });
    }

    void OnReadError(beast::error_code ec) {
      if (ec == http::error::header_limit) {
        std::string_view seen(static_cast<const char*>(buffer_.data().data()),
                              buffer_.size());
        // The target is set once the request line was parsed whole.
        if (parser_->get().target().empty() &&
            seen.find('\n') == std::string_view::npos) {
          return WriteError(
              414, "request line longer than " +
                       std::to_string(options().max_header_bytes) + " bytes");
        }
        return WriteError(431, "request header block longer than " +
                                   std::to_string(options().max_header_bytes) +
                                   " bytes");
      }
      if (ec == http::error::body_limit) {
        return WriteError(413, "request body over " +
                                   std::to_string(options().max_body_bytes) +
                                   " bytes");
      }
      if (ec == http::error::buffer_overflow) {
        return WriteError(431, "request header too large");
      }
      if (ec == http::error::end_of_stream) return;  // clean close
      if (ec.category() ==
          http::make_error_code(http::error::bad_method).category()) {
        return WriteError(400, "malformed request: " + ec.message());
      }
      // Timeouts, resets, evictions: the connection is gone; nothing to say.
    }

    void Respond() {
      const auto& req = parser_->get();
      HttpRequest in;
      in.method = std::string(req.method_string());
      in.target = std::string(req.target());
      in.body = req.body();
      in.peer = client_;
      in.content_type = std::string(Sv(req[http::field::content_type]));
      in.forwarded_for = std::string(Sv(req["X-Forwarded-For"]));
      bool keep_alive = req.keep_alive();
      if (server_->async_) {
        auto respond = [self = shared_from_this(), keep_alive](HttpReply r) {
          asio::post(self->stream_.get_executor(),
                     [self, keep_alive, r = std::move(r)]() mutable {
                       self->Write(r.status, r.content_type, std::move(r.body),
                                   keep_alive, r.headers);
                     });
        };
        if (server_->async_(in, std::move(respond))) return;
      }
      HttpReply out = server_->handler_(in);
      Write(out.status, out.content_type, std::move(out.body), keep_alive,
            out.headers);
    }

    void WriteError(int status, const std::string& message) {
      Write(status, "application/json", ErrorBody(message), false);
    }

    void Write(
        int status, const std::string& type, std::string body, bool keep_alive,
        const std::vector<std::pair<std::string, std::string>>& headers = {}) {
      res_ = {};
      res_.version(11);
      res_.result(static_cast<unsigned>(status));
      res_.set(http::field::server, "freshd");
      res_.set(http::field::content_type, type);
      if (status == 401) res_.set(http::field::www_authenticate, "Bearer");
      for (const auto& [name, value] : headers) res_.set(name, value);
      res_.body() = std::move(body);
      res_.prepare_payload();
      res_.keep_alive(keep_alive);
      stream_.expires_after(Millis(options().write_timeout_s));
      http::async_write(
          stream_, res_,
          [self = shared_from_this()](beast::error_code ec, size_t) {
            if (ec) return;
            if (self->res_.keep_alive()) return self->ReadHeader();
            self->DrainAndClose();
          });
    }

    // Half-closes, then reads and discards until the client closes too (or
    // the bounds run out), so the client sees the reply rather than a reset.
    void DrainAndClose() {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      SetIdle(true);
      stream_.expires_after(kDrainTime);
      Drain();
    }

    void Drain() {
      stream_.async_read_some(
          asio::buffer(drain_),
          [self = shared_from_this()](beast::error_code ec, size_t n) {
            self->drained_ += n;
            if (ec || self->drained_ > kMaxDrainBytes) {
              self->stream_.close();
              return;
            }
            self->Drain();
          });
    }

    beast::tcp_stream stream_;
    std::string client_;
    std::shared_ptr<Impl> server_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    std::optional<http::response<http::empty_body>> continue_;
    http::response<http::string_body> res_;
    std::array<char, 4096> drain_;
    size_t drained_ = 0;
    bool registered_ = false;
    bool refusing_ = false;
    bool idle_ = false;
    Clock::time_point idle_since_;
  };

  tcp::acceptor acceptor_;
  asio::steady_timer retry_timer_;
  Handler handler_;
  AsyncHandler async_;
  HttpServerOptions options_;
  asio::ip::address listen_ip_;
  bool loopback_ = true;
  std::list<Session*> sessions_;  // registered ones, in no particular order
  std::map<std::string, int> per_client_;
  int open_ = 0;
  int refusing_ = 0;
};

Result<std::unique_ptr<HttpServer>> HttpServer::Listen(
    boost::asio::io_context& io, const std::string& listen, Handler handler,
    HttpServerOptions options, AsyncHandler async) {
  auto impl = std::make_shared<Impl>(io, std::move(handler), std::move(options),
                                     std::move(async));
  Status s = impl->Open(listen);
  if (!s.ok()) return s;
  impl->Accept();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { impl_->Close(); }

uint16_t HttpServer::port() const { return impl_->port(); }

}  // namespace freshd::daemon

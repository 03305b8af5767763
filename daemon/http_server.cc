#include "daemon/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>

namespace freshd::daemon {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr int kMaxConnections = 64;
constexpr uint32_t kMaxHeaderBytes = 8192;
constexpr uint64_t kMaxBodyBytes = 1 << 20;
constexpr auto kIdleTimeout = std::chrono::seconds(30);

}  // namespace

class HttpServer::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::io_context& io, Handler handler)
      : acceptor_(io), handler_(std::move(handler)) {}

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
          if (!ec && self->open_ < kMaxConnections) {
            std::make_shared<Session>(std::move(socket), self)->Read();
          }
          self->Accept();
        });
  }

  void Close() {
    beast::error_code ignored;
    acceptor_.close(ignored);
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  class Session : public std::enable_shared_from_this<Session> {
   public:
    Session(tcp::socket socket, std::shared_ptr<Impl> server)
        : stream_(std::move(socket)), server_(std::move(server)) {
      ++server_->open_;
    }
    ~Session() { --server_->open_; }

    void Read() {
      parser_.emplace();
      parser_->header_limit(kMaxHeaderBytes);
      parser_->body_limit(kMaxBodyBytes);
      stream_.expires_after(kIdleTimeout);
      http::async_read(
          stream_, buffer_, *parser_,
          [self = shared_from_this()](beast::error_code ec, size_t) {
            if (!ec) self->Respond();
          });
    }

   private:
    void Respond() {
      const auto& req = parser_->get();
      HttpRequest in;
      in.method = std::string(req.method_string());
      in.target = std::string(req.target());
      in.body = req.body();
      HttpReply out = server_->handler_(in);
      res_ = {};
      res_.version(11);
      res_.result(static_cast<unsigned>(out.status));
      res_.set(http::field::server, "freshd");
      res_.set(http::field::content_type, out.content_type);
      res_.body() = std::move(out.body);
      res_.prepare_payload();
      res_.keep_alive(req.keep_alive());
      http::async_write(
          stream_, res_,
          [self = shared_from_this()](beast::error_code ec, size_t) {
            if (!ec && self->res_.keep_alive()) self->Read();
          });
    }

    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    http::response<http::string_body> res_;
    std::shared_ptr<Impl> server_;
  };

  tcp::acceptor acceptor_;
  Handler handler_;
  int open_ = 0;
};

Result<std::unique_ptr<HttpServer>> HttpServer::Listen(
    boost::asio::io_context& io, const std::string& listen, Handler handler) {
  auto impl = std::make_shared<Impl>(io, std::move(handler));
  Status s = impl->Open(listen);
  if (!s.ok()) return s;
  impl->Accept();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { impl_->Close(); }

uint16_t HttpServer::port() const { return impl_->port(); }

}  // namespace freshd::daemon

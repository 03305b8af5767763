#include "sim/test_web_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/clock.h"

namespace freshd::sim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr int kMaxConnections = 256;
constexpr uint32_t kMaxHeaderBytes = 8192;
constexpr auto kIdleTimeout = std::chrono::seconds(30);

struct Shared {
  std::shared_ptr<const WebResponder> web;
  std::shared_ptr<std::atomic<uint64_t>> requests;
  std::atomic<int> open{0};
  std::mutex log_mu;
  FILE* access_log = nullptr;  // guarded by log_mu; owned

  ~Shared() {
    if (access_log != nullptr) std::fclose(access_log);
  }
  void Log(std::string_view host, std::string_view target,
           std::string_view agent) {
    std::lock_guard<std::mutex> lock(log_mu);
    if (access_log == nullptr) return;
    std::fprintf(access_log, "%.6f\t%.*s\t%.*s\t%.*s\n", UnixNow(),
                 static_cast<int>(host.size()), host.data(),
                 static_cast<int>(target.size()), target.data(),
                 static_cast<int>(agent.size()), agent.data());
    std::fflush(access_log);
  }
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {
    ++shared_->open;
  }
  ~Session() { --shared_->open; }

  void Read() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(0);
    stream_.expires_after(kIdleTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec) return Close();
    const auto& req = parser_->get();
    ++*shared_->requests;
    if (shared_->access_log != nullptr) {
      auto v = [](beast::string_view x) {
        return std::string_view(x.data(), x.size());
      };
      shared_->Log(v(req[http::field::host]), v(req.target()),
                   v(req[http::field::user_agent]));
    }
    res_ = {};
    res_.version(11);
    res_.set(http::field::server, "freshd-testweb");
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      res_.result(http::status::method_not_allowed);
      res_.set(http::field::allow, "GET, HEAD");
    } else {
      auto view = [](beast::string_view v) {
        return std::string_view(v.data(), v.size());
      };
      WebResponse r = shared_->web->Respond(
          view(req[http::field::host]), view(req.target()),
          view(req[http::field::if_none_match]), UnixNow());
      res_.result(static_cast<unsigned>(r.status));
      for (auto& [name, value] : r.headers) res_.set(name, value);
      if (req.method() == http::verb::get) res_.body() = std::move(r.body);
      if (r.status != 304) res_.content_length(res_.body().size());
    }
    res_.keep_alive(req.keep_alive());
    http::async_write(
        stream_, res_,
        [self = shared_from_this()](beast::error_code ec, size_t) {
          if (ec || !self->res_.keep_alive()) return self->Close();
          self->Read();
        });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> res_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace

class TestWebServer::Impl {
 public:
  explicit Impl(std::shared_ptr<Shared> shared)
      : shared_(std::move(shared)), acceptor_(io_) {}

  Status Listen(const std::string& address, uint16_t port) {
    beast::error_code ec;
    auto ip = asio::ip::make_address(address, ec);
    if (ec) {
      return Status::InvalidArgument("testweb: bad listen address: " + address);
    }
    tcp::endpoint ep(ip, port);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return Status::IOError("testweb: cannot listen on " + address + ":" +
                             std::to_string(port) + ": " + ec.message());
    }
    return Status::OK();
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

  void Run(int threads) {
    Accept();
    for (int i = 0; i < std::max(1, threads); ++i) {
      threads_.emplace_back([this] { io_.run(); });
    }
  }

  void Stop() {
    if (stopped_) return;
    stopped_ = true;
    io_.stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
    // No thread runs handlers any more: close the listener here, so the
    // kernel stops accepting at once.
    beast::error_code ignored;
    acceptor_.close(ignored);
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open()) {
          return;
        }
      } else if (shared_->open.load() < kMaxConnections) {
        std::make_shared<Session>(std::move(socket), shared_)->Read();
      }  // else: over the limit, `socket` closes on return
      Accept();
    });
  }

  std::shared_ptr<Shared> shared_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

Result<std::unique_ptr<TestWebServer>> TestWebServer::Start(
    std::shared_ptr<const WebResponder> web, const std::string& address,
    uint16_t port, int threads, const std::string& access_log) {
  auto shared = std::make_shared<Shared>();
  shared->web = std::move(web);
  if (!access_log.empty()) {
    shared->access_log = std::fopen(access_log.c_str(), "a");
    if (shared->access_log == nullptr) {
      return Status::IOError("testweb: cannot open access log " + access_log);
    }
  }
  shared->requests = std::make_shared<std::atomic<uint64_t>>(0);
  auto impl = std::make_unique<Impl>(shared);
  Status s = impl->Listen(address, port);
  if (!s.ok()) return s;
  std::unique_ptr<TestWebServer> server(new TestWebServer(std::move(impl)));
  server->port_ = server->impl_->port();
  server->requests_ = shared->requests;
  server->impl_->Run(threads);
  return server;
}

TestWebServer::TestWebServer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

TestWebServer::~TestWebServer() { Stop(); }

void TestWebServer::Stop() { impl_->Stop(); }

}  // namespace freshd::sim

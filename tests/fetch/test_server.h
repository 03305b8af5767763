// A small hostile HTTP/1.1 server for the fetch tests, on 127.0.0.1 with an
// ephemeral port, running its own Boost.Asio io_context on its own thread.
// Requests are parsed with Beast; replies are written as raw bytes so a
// handler can misbehave on purpose: delay, drip one byte at a time, send an
// endless body, huge headers, or reset the connection (RST). Every request
// is logged with its arrival time (steady clock) so tests can measure
// politeness at the server. Keep-alive is honoured for normal replies.
// Thread-safety: requests()/request_count() may be called from any thread;
// the handler runs on the server thread only.

#ifndef FRESHD_TESTS_FETCH_TEST_SERVER_H_
#define FRESHD_TESTS_FETCH_TEST_SERVER_H_

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace freshd::fetch::testing {

struct ServerRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // lower-case names
  std::chrono::steady_clock::time_point arrival;
  int connection = 0;  // which accepted connection carried it

  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

struct Reply {
  // kRaw: `body` is sent as the whole reply (no status line or headers
  // added), then the connection is closed.
  enum class Mode { kNormal, kDrip, kEndless, kReset, kRaw };
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  Mode mode = Mode::kNormal;
  std::chrono::milliseconds delay{0};  // before the first byte
  std::chrono::milliseconds drip_interval{250};
  size_t filler_header_bytes = 0;  // extra "X-Filler" header lines
  bool content_length = true;      // send Content-Length (normal mode)

  static Reply Html(std::string body) {
    Reply r;
    r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
    r.body = std::move(body);
    return r;
  }
  static Reply Status(int status, std::string body = "") {
    Reply r;
    r.status = status;
    r.headers.emplace_back("Content-Type", "text/plain");
    r.body = std::move(body);
    return r;
  }
  static Reply Redirect(int status, std::string location) {
    Reply r = Status(status);
    r.headers.emplace_back("Location", std::move(location));
    return r;
  }
};

using Handler = std::function<Reply(const ServerRequest&)>;

class TestServer {
 public:
  explicit TestServer(Handler handler)
      : handler_(std::move(handler)),
        acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TestServer() {
    boost::asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      io_.stop();
    });
    thread_.join();
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  uint16_t port() const { return port_; }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string Url(const std::string& path) const {
    return "http://" + endpoint() + path;
  }
  std::vector<ServerRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  size_t request_count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_.size();
  }
  // Requests whose target equals `target`.
  size_t CountTarget(const std::string& target) const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& r : requests_) n += r.target == target;
    return n;
  }
  int connections() const {
    std::lock_guard<std::mutex> lock(mu_);
    return connections_;
  }

 private:
  using tcp = boost::asio::ip::tcp;

  class Session : public std::enable_shared_from_this<Session> {
   public:
    Session(TestServer* server, tcp::socket socket, int id)
        : server_(server),
          socket_(std::move(socket)),
          timer_(socket_.get_executor()),
          id_(id) {}

    void Read() {
      parser_.emplace();
      parser_->header_limit(1 << 20);
      parser_->body_limit(1 << 20);
      boost::beast::http::async_read(
          socket_, buffer_, *parser_,
          [self = shared_from_this()](boost::system::error_code ec, size_t) {
            if (!ec) self->OnRequest();
          });
    }

   private:
    void OnRequest() {
      auto& msg = parser_->get();
      ServerRequest req;
      req.method = std::string(msg.method_string());
      req.target = std::string(msg.target());
      req.arrival = std::chrono::steady_clock::now();
      req.connection = id_;
      for (const auto& f : msg) {
        std::string name(f.name_string());
        for (char& c : name) c = static_cast<char>(std::tolower(c));
        req.headers[name] = std::string(f.value());
      }
      keep_alive_ = msg.keep_alive();
      server_->Record(req);
      reply_ = server_->handler_(req);
      if (reply_.delay.count() > 0) {
        timer_.expires_after(reply_.delay);
        timer_.async_wait(
            [self = shared_from_this()](boost::system::error_code ec) {
              if (!ec) self->Respond();
            });
      } else {
        Respond();
      }
    }

    std::string Head(bool with_length) const {
      std::string h = "HTTP/1.1 " + std::to_string(reply_.status) + " X\r\n";
      for (const auto& [k, v] : reply_.headers) h += k + ": " + v + "\r\n";
      for (size_t n = 0; n < reply_.filler_header_bytes; n += 1000) {
        h += "X-Filler: " + std::string(986, 'f') + "\r\n";
      }
      if (with_length) {
        h += "Content-Length: " + std::to_string(reply_.body.size()) + "\r\n";
      }
      bool close = !keep_alive_ || reply_.mode != Reply::Mode::kNormal ||
                   !reply_.content_length;
      h += close ? "Connection: close\r\n" : "Connection: keep-alive\r\n";
      return h + "\r\n";
    }

    void Respond() {
      auto self = shared_from_this();
      switch (reply_.mode) {
        case Reply::Mode::kReset: {
          boost::system::error_code ec;
          socket_.set_option(boost::asio::socket_base::linger(true, 0), ec);
          socket_.close(ec);  // RST
          return;
        }
        case Reply::Mode::kRaw:
          out_ = reply_.body;
          boost::asio::async_write(
              socket_, boost::asio::buffer(out_),
              [self](boost::system::error_code ec, size_t) {
                self->socket_.shutdown(tcp::socket::shutdown_send, ec);
              });
          return;
        case Reply::Mode::kNormal:
          out_ = Head(reply_.content_length) + reply_.body;
          boost::asio::async_write(
              socket_, boost::asio::buffer(out_),
              [self](boost::system::error_code ec, size_t) {
                if (ec) return;
                if (self->keep_alive_ && self->reply_.content_length) {
                  self->Read();
                } else {
                  self->socket_.shutdown(tcp::socket::shutdown_send, ec);
                }
              });
          return;
        case Reply::Mode::kDrip:
          out_ = Head(true);
          drip_pos_ = 0;
          boost::asio::async_write(
              socket_, boost::asio::buffer(out_),
              [self](boost::system::error_code ec, size_t) {
                if (!ec) self->Drip();
              });
          return;
        case Reply::Mode::kEndless:
          out_ = Head(false);
          boost::asio::async_write(
              socket_, boost::asio::buffer(out_),
              [self](boost::system::error_code ec, size_t) {
                if (!ec) self->Flood();
              });
          return;
      }
    }

    void Drip() {
      if (drip_pos_ >= reply_.body.size()) return;
      timer_.expires_after(reply_.drip_interval);
      timer_.async_wait(
          [self = shared_from_this()](boost::system::error_code ec) {
            if (ec) return;
            boost::asio::async_write(
                self->socket_,
                boost::asio::buffer(&self->reply_.body[self->drip_pos_], 1),
                [self](boost::system::error_code ec2, size_t) {
                  if (ec2) return;
                  ++self->drip_pos_;
                  self->Drip();
                });
          });
    }

    void Flood() {
      if (chunk_.empty()) {
        chunk_ = reply_.body.empty() ? std::string(16384, 'x') : reply_.body;
      }
      boost::asio::async_write(
          socket_, boost::asio::buffer(chunk_),
          [self = shared_from_this()](boost::system::error_code ec, size_t) {
            if (!ec) self->Flood();
          });
    }

    TestServer* server_;
    tcp::socket socket_;
    boost::asio::steady_timer timer_;
    int id_;
    boost::beast::flat_buffer buffer_;
    std::optional<
        boost::beast::http::request_parser<boost::beast::http::string_body>>
        parser_;
    bool keep_alive_ = true;
    Reply reply_;
    std::string out_;
    std::string chunk_;
    size_t drip_pos_ = 0;
  };

  void Accept() {
    acceptor_.async_accept(
        [this](boost::system::error_code ec, tcp::socket socket) {
          if (ec) return;
          int id;
          {
            std::lock_guard<std::mutex> lock(mu_);
            id = ++connections_;
          }
          std::make_shared<Session>(this, std::move(socket), id)->Read();
          Accept();
        });
  }

  void Record(const ServerRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(r);
  }

  Handler handler_;
  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<ServerRequest> requests_;  // guarded by mu_
  int connections_ = 0;                  // guarded by mu_
};

}  // namespace freshd::fetch::testing

#endif  // FRESHD_TESTS_FETCH_TEST_SERVER_H_

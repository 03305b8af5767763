// A small HTTP/1.1 server (Boost.Beast) for the status endpoint, hardened
// like a local admin API. Handlers run on the io_context's thread.
//
// Bounds (HttpServerOptions): a request's header block must arrive within
// header_timeout_s and its body within body_timeout_s; at most
// max_connections open connections and max_connections_per_client per
// source address. When a cap is reached, the oldest connection still
// waiting for a request header is closed to make room (so clients that stall
// half-way through a request line cannot lock others out); if none is
// waiting, the newcomer gets 503.
//
// Every request is checked before the handler sees it (all but the first
// rule skipped with `public_listener`):
//   - Host must be a loopback literal (127.0.0.0/8, [::1]), "localhost", the
//     listening address, or one of allowed_hosts (port optional), else 421;
//     HTTP/1.1 without Host: 400;
//   - when `token` is set, a request other than GET/HEAD (and every request
//     when listening on a non-loopback address) needs
//     "Authorization: Bearer <token>", else 401;
//   - a request other than GET/HEAD needs Content-Type application/json
//     (else 415) and no Origin header naming a host not allowed as above
//     (else 403).
// Malformed HTTP is answered, not reset: 400 (bad syntax, bad chunking),
// 413 (declared or sent body over max_body_bytes), 414 (request line over
// max_header_bytes), 431 (header block over max_header_bytes); every error
// reply has a JSON body {"error": "..."} and closes the connection after
// draining what the client still sends (bounded in bytes and time).
// Not thread-safe: create, use and destroy on the io_context's thread.

#ifndef FRESHD_DAEMON_HTTP_SERVER_H_
#define FRESHD_DAEMON_HTTP_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace freshd::daemon {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query as sent
  std::string body;
  std::string peer;           // the connection's source address
  std::string content_type;   // the Content-Type header as sent
  std::string forwarded_for;  // the X-Forwarded-For header as sent
  std::string hub_signature;  // the X-Hub-Signature header (WebSub §8)
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Further response headers (name, value), e.g. Content-Security-Policy.
  std::vector<std::pair<std::string, std::string>> headers = {};
};

struct HttpServerOptions {
  int max_connections = 64;            // open at once, all clients
  int max_connections_per_client = 8;  // per source IP address
  double header_timeout_s = 5;         // request line + headers, per request
  double body_timeout_s = 10;          // the body, after the headers
  double write_timeout_s = 10;         // one reply
  uint32_t max_header_bytes = 8192;    // request line + header block
  uint64_t max_body_bytes = 1 << 20;
  // Host names accepted in Host and Origin besides loopback literals,
  // "localhost" and the listening address (case-insensitive, no port).
  std::vector<std::string> allowed_hosts;
  // Bearer token; empty: none. Required to listen on a non-loopback address
  // unless `public_listener`.
  std::string token;
  // A listener sites reach from anywhere (daemon/push_listener.h): the
  // bounds above and the malformed-HTTP replies hold, the access rules do
  // not (no Host, Origin, Content-Type or token checks: the handler judges
  // each request, and nothing it serves is an admin's).
  bool public_listener = false;
};

// True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104 literals.
bool IsLoopbackLiteral(const std::string& ip);

// "ADDRESS:PORT" whose address is a loopback literal.
bool IsLoopbackListen(const std::string& listen);

// Reads a bearer token file: its first line, surrounding whitespace
// trimmed; 16 to 4096 printable ASCII characters. NotFound/IOError for the
// file, InvalidArgument for its content.
Result<std::string> ReadTokenFile(const std::string& path);

class HttpServer {
 public:
  using Handler = std::function<HttpReply(const HttpRequest&)>;
  // Consulted before `Handler` for every request that passed the checks:
  // returns false to leave the request to the Handler, or true having taken
  // it, and then calls `respond` exactly once, later, from any thread (the
  // reply is written on the io_context's thread; a connection closed
  // meanwhile drops it). For replies that wait (long polls) without
  // holding the io_context's thread.
  using AsyncHandler = std::function<bool(
      const HttpRequest&, std::function<void(HttpReply)> respond)>;

  // Listens on "ADDRESS:PORT" (port 0: ephemeral). InvalidArgument for a
  // malformed address, bad options, or a non-loopback address without a
  // token; IOError when it cannot bind.
  static Result<std::unique_ptr<HttpServer>> Listen(
      boost::asio::io_context& io, const std::string& listen, Handler handler,
      HttpServerOptions options = {}, AsyncHandler async = {});
  ~HttpServer();  // closes the listener; open connections end on their own

  uint16_t port() const;

 private:
  class Impl;
  explicit HttpServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_HTTP_SERVER_H_

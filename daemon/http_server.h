// A small HTTP/1.1 server (Boost.Beast) on the daemon's own io_context, for
// the status endpoint. Handlers run on the io_context's thread, so they may
// read the scheduler's state without locks. Bounded: 8 KiB of headers, 1 MiB
// of body, 64 open connections, 30 s idle timeout per connection.
// Not thread-safe: create, use and destroy on the io_context's thread.

#ifndef FRESHD_DAEMON_HTTP_SERVER_H_
#define FRESHD_DAEMON_HTTP_SERVER_H_

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace freshd::daemon {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query as sent
  std::string body;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<HttpReply(const HttpRequest&)>;

  // Listens on "ADDRESS:PORT" (port 0: ephemeral). InvalidArgument for a
  // malformed address, IOError when it cannot bind.
  static Result<std::unique_ptr<HttpServer>> Listen(boost::asio::io_context& io,
                                                    const std::string& listen,
                                                    Handler handler);
  ~HttpServer();  // closes the listener; open connections end on their own

  uint16_t port() const;

 private:
  class Impl;
  explicit HttpServer(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_HTTP_SERVER_H_

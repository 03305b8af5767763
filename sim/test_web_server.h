// An HTTP/1.1 server (Boost.Beast) for a test web (a generated TestWeb or a
// replayed TraceWeb): every GET is answered by WebResponder::Respond at the
// wall-clock time of the request. Keep-alive is honoured; requests are bounded
// (8 KiB of headers, no body accepted), idle connections close after 30 s, at
// most 256 connections are open at once. Runs its own io_context on `threads`
// threads until Stop() or destruction. With an access log, every request is
// appended to it as one line, "UNIX_TIME HOST TARGET USER_AGENT"
// (tab-separated, flushed per line), so a test can tell which crawler fetched
// what, and when. Thread-safety: Start/Stop from one owner thread; counters
// from any thread.

#ifndef FRESHD_SIM_TEST_WEB_SERVER_H_
#define FRESHD_SIM_TEST_WEB_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "sim/web_responder.h"

namespace freshd::sim {

class TestWebServer {
 public:
  // Listens on `address:port` (port 0: an ephemeral port, see port()).
  // `access_log`: a file to append requests to ("": none). InvalidArgument
  // for a bad address, IOError if it cannot bind or open the log.
  static Result<std::unique_ptr<TestWebServer>> Start(
      std::shared_ptr<const WebResponder> web, const std::string& address,
      uint16_t port, int threads = 1, const std::string& access_log = "");
  ~TestWebServer();  // Stop()s

  // Stops serving and closes the listener; connections still open are
  // closed when the server is destroyed. Idempotent.
  void Stop();

  uint16_t port() const { return port_; }
  uint64_t requests() const { return requests_->load(); }

 private:
  class Impl;
  explicit TestWebServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
  std::shared_ptr<std::atomic<uint64_t>> requests_;
};

}  // namespace freshd::sim

#endif  // FRESHD_SIM_TEST_WEB_SERVER_H_

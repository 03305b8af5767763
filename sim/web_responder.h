// What a test web server (sim/test_web_server.h) asks of the web it serves:
// one HTTP answer per GET, a pure function of the request and the wall
// clock. Implemented by the generated web (sim/test_web.h) and by a real
// change history replayed in compressed time (sim/trace_web.h). Also the
// small HTTP helpers both share. Implementations are thread-safe (const).

#ifndef FRESHD_SIM_WEB_RESPONDER_H_
#define FRESHD_SIM_WEB_RESPONDER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace freshd::sim {

struct WebResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class WebResponder {
 public:
  virtual ~WebResponder() = default;
  // Answers a GET. `host_header` as sent (port allowed); `target` the
  // request target (path and query); `if_none_match` empty when absent;
  // `unix_now` the wall clock. Never throws.
  virtual WebResponse Respond(std::string_view host_header,
                              std::string_view target,
                              std::string_view if_none_match,
                              double unix_now) const = 0;
};

// "Sat, 21 Nov 2026 19:40:00 GMT" and "2026-11-21T19:40:00Z".
std::string HttpDate(double unix_seconds);
std::string IsoDate(double unix_seconds);

// RFC 9110 If-None-Match: "*" or a list of (possibly weak) entity tags, one
// of which is `etag`.
bool EtagMatches(std::string_view header, const std::string& etag);

// A text/plain answer.
WebResponse TextResponse(int status, std::string body);

}  // namespace freshd::sim

#endif  // FRESHD_SIM_WEB_RESPONDER_H_

// The human status page and the JSON behind it (docs/DESIGN.md "contract —
// status endpoint"), served by the daemon from assets embedded in the
// binary (daemon/status_page/, turned into a header at build time):
//   GET /               the page (HTML), with a Content-Security-Policy
//                       that allows only its own script, style and JSON
//   GET /ui/status.js, /ui/status.css
//   GET /hosts?sort=S&offset=N&limit=N   per-host JSON, sorted (pages,
//                       fetches, errors, bytes, host), paged: limit ≤
//                       kMaxHostsPage (default 100); bad values: 400
//   GET /history        the plots' points (daemon/status_history.h)
//   GET /overview       errors by class, pages due next, recent fetches
// The HttpServer's Host/Origin rules apply as to every route.
// Runs on the CrawlLoop's thread, like RouteStatusRequest.

#ifndef FRESHD_DAEMON_STATUS_PAGE_H_
#define FRESHD_DAEMON_STATUS_PAGE_H_

#include <optional>
#include <string_view>

#include "daemon/crawl_loop.h"
#include "daemon/http_server.h"

namespace freshd::daemon {

inline constexpr size_t kMaxHostsPage = 500;
inline constexpr std::string_view kStatusPageCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

// The reply for a status-page path, or nullopt when `path` is not one
// (the caller routes it). `query` is the target's part after '?'.
std::optional<HttpReply> RouteStatusPage(CrawlLoop& loop,
                                         const HttpRequest& request,
                                         std::string_view path,
                                         std::string_view query);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_STATUS_PAGE_H_

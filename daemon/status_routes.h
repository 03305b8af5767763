// The status endpoint's routes over a CrawlLoop (docs/DESIGN.md contract):
//   GET  /status         JSON summary
//   GET  /metrics        Prometheus text exposition 0.0.4
//   GET  /page?url=URL   one page's state (URL percent-encoded)
//   GET  /, /hosts, /history, /overview   the status page (status_page.h)
//   POST /signal         {"url": U} or {"urls": [U, ...]} (at most 10,000),
//                        optionally "lastmod": W3C datetime of the change,
//                        at most a day ahead of the clock (else 400):
//                        change hints, like sitemap lastmod signals (one
//                        not after the page's last fetch is stale, dropped).
//                        More than kMaxSignalUrls URLs: 413, nothing taken.
//   POST /control        {"action": "pause"|"resume"|"block"|"unblock",
//                        "host": H} or {..., "pattern": RE2}: an operator
//                        control (daemon/operator_controls.h); 200 with the
//                        controls in force, 400 (bad body, unknown action,
//                        bad pattern with RE2's error, refused transition),
//                        404 (resume/unblock of no control), 409 (bounds).
//                        Like every POST: loopback Host, no foreign Origin.
//   GET  /control        the controls in force, all of them, and counts
//   GET  /changes?since=C&limit=N&wait=S   the change feed: served by the
//                        StatusService on its own thread (daemon/change_feed.h)
// Access rules (Host, Origin, Content-Type, bearer token) and HTTP-level
// errors are the HttpServer's (daemon/http_server.h).
// Anything else: 404, or 405 for a known path with the wrong method.
// Runs on the CrawlLoop's thread (the HttpServer's io_context).
// During recovery, RouteRecoveringRequest (below) answers instead.

#ifndef FRESHD_DAEMON_STATUS_ROUTES_H_
#define FRESHD_DAEMON_STATUS_ROUTES_H_

#include <optional>
#include <string>
#include <string_view>

#include "daemon/crawl_loop.h"
#include "daemon/http_server.h"
#include "daemon/recovery.h"

namespace freshd::daemon {

inline constexpr size_t kMaxSignalUrls = 10000;
inline constexpr double kMaxLastmodAheadS = 86400;

HttpReply RouteStatusRequest(CrawlLoop& loop, const HttpRequest& request);

// While the store is recovered (before CrawlLoop::Create returns): GET
// /status is 200 with {"state": "recovering", "recovery": {"pages_restored",
// "pages_expected" (the store's global count), "hosts_restored",
// "elapsed_s", "phase" ("store", then "seeds" while the seeds file is
// added), "seeds_read", "seeds_total"}}; /status with another method 405; any
// other path 503 (not ready) with the same JSON plus "error", and
// Retry-After: 1. Reads `progress` only (atomics): runs on the status thread
// while another thread recovers.
HttpReply RouteRecoveringRequest(const RecoveryProgress& progress,
                                 const HttpRequest& request, double now_unix);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_STATUS_ROUTES_H_

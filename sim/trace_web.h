// A real change history (sim/trace.h) served as a web in compressed time
// (`freshd testweb --trace`): the trace's own host names and URL paths over
// plain HTTP, so a daemon whose `[fetch] resolve` points those names at the
// server crawls the history as it happened. Trace time t0 (the earliest
// event, or TraceWebOptions::t0) is wall time start_unix, and a trace day
// lasts day_seconds of wall time. At trace time T, for each host (a host
// name without its port; a request's Host port is ignored):
//   PATH?QUERY          a trace page: 200 while it exists (from its create,
//                       or always, up to its delete); its body and ETag name
//                       its version, the number of its changes at or before
//                       T, so the content differs exactly at the trace's
//                       change times; Last-Modified its latest change (or
//                       creation; t0 if neither); If-None-Match with the
//                       current ETag gives 304. 404 before its creation,
//                       410 from its deletion. Each links the host's index.
//   /                   the first index page (unless the trace has "/" as a
//                       page, which then links the index)
//   /_testweb/index/N   index page N (1-based): links to the host's
//                       existing pages N*k-k+1..N*k in URL order (k =
//                       index_links) and to index pages N-1 and N+1, so
//                       every page is reachable however many a host has
//   /robots.txt         allow all, and a Sitemap line
//   /sitemap.xml        the host's existing pages (with lastmod = their
//                       latest change when `lastmod`); above 50,000 pages a
//                       sitemap index of /_testweb/sitemap/N.xml parts
// Unknown hosts and paths are 404. Two trace URLs that differ only in scheme
// or port are one path on one served host: the first in URL order wins.
// Memory: the trace (sim/trace.h) plus 4 bytes a page.
// Thread-safe: const after construction.

#ifndef FRESHD_SIM_TRACE_WEB_H_
#define FRESHD_SIM_TRACE_WEB_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/trace.h"
#include "sim/web_responder.h"

namespace freshd::sim {

struct TraceWebOptions {
  double day_seconds = 86400;  // wall seconds per trace day, > 0
  double start_unix = 0;       // wall time of trace time t0
  // Trace time mapped to start_unix; NaN: the trace's first event (0 when
  // it has none).
  double t0 = std::numeric_limits<double>::quiet_NaN();
  uint32_t index_links = 1000;  // links per index page, >= 1
  bool lastmod = false;         // sitemap lastmod = true latest change
};

// A trace page's state at one trace time.
struct TracePageState {
  bool created = false;  // its creation is at or before the time
  bool deleted = false;  // its deletion is at or before the time
  uint64_t version = 0;  // its changes at or before the time
  // Trace time of its latest change at or before the time, else of its
  // creation, else -inf.
  double last_change = -std::numeric_limits<double>::infinity();
  bool exists() const { return created && !deleted; }
};

class TraceWeb : public WebResponder {
 public:
  TraceWeb(Trace trace, TraceWebOptions options);

  WebResponse Respond(std::string_view host_header, std::string_view target,
                      std::string_view if_none_match,
                      double unix_now) const override;

  double TraceTime(double unix_now) const;  // never before t0
  double UnixTime(double trace_time) const;
  TracePageState PageAt(uint32_t page, double trace_time) const;
  // The served host names (no port), sorted, and a page's path and query.
  const std::vector<std::string>& host_names() const { return host_names_; }
  std::string_view Target(uint32_t page) const;
  // The page a host name (port ignored) serves at `target`, if any.
  std::optional<uint32_t> FindPage(std::string_view host_header,
                                   std::string_view target) const;
  // Index page N (1-based) of a host at a trace time: its pages, in order.
  std::vector<uint32_t> IndexPage(uint32_t host, uint64_t n,
                                  double trace_time) const;

  const Trace& trace() const { return trace_; }
  const TraceWebOptions& options() const { return options_; }

 private:
  std::optional<uint32_t> HostOf(std::string_view host_header) const;
  WebResponse Index(uint32_t host, uint64_t n, double t) const;
  WebResponse Page(uint32_t page, std::string_view inm, double t) const;
  WebResponse Sitemap(uint32_t host, std::string_view host_header,
                      std::optional<uint64_t> part, double t) const;
  // The host's pages existing at `t`, from the `skip`-th, at most `limit`.
  std::vector<uint32_t> Existing(uint32_t host, uint64_t skip, uint64_t limit,
                                 double t) const;
  uint64_t CountExisting(uint32_t host, double t) const;

  Trace trace_;
  TraceWebOptions options_;
  std::vector<std::string> host_names_;
  std::vector<std::vector<uint32_t>> host_pages_;  // sorted by Target
};

}  // namespace freshd::sim

#endif  // FRESHD_SIM_TRACE_WEB_H_

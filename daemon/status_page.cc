#include "daemon/status_page.h"

#include <charconv>
#include <string>

#include "daemon/json_reply.h"
#include "daemon/status_page_assets.h"
#include "daemon/status_routes.h"
#include "parse/url.h"

namespace freshd::daemon {
namespace {

constexpr size_t kDefaultHostsPage = 100;

HttpReply Asset(std::string_view type, std::string_view body) {
  HttpReply reply{200, std::string(type), std::string(body), {}};
  reply.headers = {
      {"Content-Security-Policy", std::string(kStatusPageCsp)},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-cache"},
  };
  return reply;
}

// A query parameter as a count in [0, max]; `fallback` when absent.
std::optional<size_t> CountParam(std::string_view query, std::string_view name,
                                 size_t fallback, size_t max) {
  std::optional<std::string> v = parse::FormValue(query, name);
  if (!v) return fallback;
  size_t n = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size() || n > max) {
    return std::nullopt;
  }
  return n;
}

HttpReply Hosts(CrawlLoop& loop, std::string_view query) {
  const std::string sort = parse::FormValue(query, "sort").value_or("pages");
  if (sort != "pages" && sort != "fetches" && sort != "errors" &&
      sort != "bytes" && sort != "host") {
    return JsonReply(
        400, {{"error", "sort must be pages, fetches, errors, bytes or host"}});
  }
  const auto offset = CountParam(query, "offset", 0, size_t{1} << 32);
  const auto limit =
      CountParam(query, "limit", kDefaultHostsPage, kMaxHostsPage);
  if (!offset || !limit) {
    return JsonReply(400,
                     {{"error", "offset must be a count, limit a count ≤ " +
                                    std::to_string(kMaxHostsPage)}});
  }
  return JsonReply(200, loop.HostsJson(*offset, *limit, sort));
}

}  // namespace

std::optional<HttpReply> RouteStatusPage(CrawlLoop& loop,
                                         const HttpRequest& request,
                                         std::string_view path,
                                         std::string_view query) {
  if (path != "/" && path != "/ui/status.js" && path != "/ui/status.css" &&
      path != "/hosts" && path != "/history" && path != "/overview") {
    return std::nullopt;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return JsonReply(405, {{"error", "use GET"}});
  }
  if (path == "/") return Asset("text/html; charset=utf-8", assets::kIndexHtml);
  if (path == "/ui/status.js") {
    return Asset("text/javascript; charset=utf-8", assets::kStatusJs);
  }
  if (path == "/ui/status.css") {
    return Asset("text/css; charset=utf-8", assets::kStatusCss);
  }
  if (path == "/hosts") return Hosts(loop, query);
  if (path == "/history") return JsonReply(200, loop.HistoryJson());
  return JsonReply(200, loop.OverviewJson());
}

}  // namespace freshd::daemon

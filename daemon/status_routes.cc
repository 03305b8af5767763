#include "daemon/status_routes.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "daemon/json_reply.h"
#include "daemon/status_page.h"
#include "parse/url.h"
#include "parse/w3c_datetime.h"

namespace freshd::daemon {
namespace {

HttpReply Error(int status, const std::string& message) {
  return JsonReply(status, {{"error", message}});
}

}  // namespace

namespace {

HttpReply PostSignal(CrawlLoop& loop, const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Error(400, "body must be a JSON object {\"urls\": [...]}");
  }
  std::vector<std::string> urls;
  if (j.contains("url")) {
    if (!j["url"].is_string()) return Error(400, "\"url\" must be a string");
    urls.push_back(j["url"].get<std::string>());
  }
  if (j.contains("urls")) {
    if (!j["urls"].is_array()) return Error(400, "\"urls\" must be an array");
    if (j["urls"].size() > kMaxSignalUrls) {
      return Error(413, "at most " + std::to_string(kMaxSignalUrls) +
                            " URLs per request");
    }
    for (const auto& u : j["urls"]) {
      if (!u.is_string()) return Error(400, "\"urls\" must hold strings");
      urls.push_back(u.get<std::string>());
    }
  }
  if (urls.empty()) return Error(400, "no \"url\" or \"urls\" given");
  double changed_at = -std::numeric_limits<double>::infinity();
  if (j.contains("lastmod")) {
    std::optional<int64_t> t;
    if (j["lastmod"].is_string()) {
      t = parse::ParseW3cDatetime(j["lastmod"].get<std::string>());
    }
    if (!t) {
      return Error(400,
                   "\"lastmod\" must be a W3C datetime string, e.g. "
                   "\"2026-11-22T08:00:00Z\"");
    }
    if (static_cast<double>(*t) > UnixNow() + kMaxLastmodAheadS) {
      return Error(400, "\"lastmod\" is more than a day in the future");
    }
    changed_at = static_cast<double>(*t);
  }
  return JsonReply(200, loop.Signal(urls, changed_at));
}

HttpReply RouteControl(CrawlLoop& loop, const HttpRequest& request, bool get) {
  if (get) return JsonReply(200, loop.ControlsJson());
  if (request.method != "POST") return Error(405, "use GET or POST");
  auto result = loop.Control(request.body);
  if (result.ok()) return JsonReply(200, result.value());
  switch (result.status().code()) {
    case Status::Code::kNotFound:
      return Error(404, result.status().message());
    case Status::Code::kResourceExhausted:
      return Error(409, result.status().message());
    default:
      return Error(400, result.status().message());
  }
}

}  // namespace

nlohmann::json RecoveringJson(const RecoveryProgress& progress,
                              double now_unix) {
  const double started = progress.started_unix.load(std::memory_order_relaxed);
  return {
      {"state", "recovering"},
      {"recovery",
       {{"pages_restored",
         progress.pages_restored.load(std::memory_order_relaxed)},
        {"pages_expected",
         progress.expected_pages.load(std::memory_order_relaxed)},
        {"hosts_restored",
         progress.hosts_restored.load(std::memory_order_relaxed)},
        {"elapsed_s", started > 0 ? std::max(0.0, now_unix - started) : 0.0},
        {"phase", progress.adding_seeds.load(std::memory_order_relaxed)
                      ? "seeds"
                      : "store"},
        {"seeds_read", progress.seeds_read.load(std::memory_order_relaxed)},
        {"seeds_total", progress.seeds_total.load(std::memory_order_relaxed)}}},
  };
}

HttpReply RouteRecoveringRequest(const RecoveryProgress& progress,
                                 const HttpRequest& request, double now_unix) {
  std::string_view target = request.target;
  std::string_view path = target.substr(0, target.find('?'));
  nlohmann::json j = RecoveringJson(progress, now_unix);
  if (path == "/status") {
    if (request.method == "GET" || request.method == "HEAD")
      return JsonReply(200, j);
    return Error(405, "use GET");
  }
  j["error"] =
      "recovering the store: only /status answers until it is done; try "
      "again";
  HttpReply reply = JsonReply(503, j);
  reply.headers.emplace_back("Retry-After", "1");
  return reply;
}

HttpReply RouteStatusRequest(CrawlLoop& loop, const HttpRequest& request) {
  std::string_view target = request.target;
  std::string_view path = target.substr(0, target.find('?'));
  std::string_view query;
  if (path.size() < target.size()) query = target.substr(path.size() + 1);
  if (auto page = RouteStatusPage(loop, request, path, query)) return *page;
  bool get = request.method == "GET" || request.method == "HEAD";
  if (path == "/status") {
    return get ? JsonReply(200, loop.StatusJson()) : Error(405, "use GET");
  }
  if (path == "/metrics") {
    if (!get) return Error(405, "use GET");
    return HttpReply{200, "text/plain; version=0.0.4; charset=utf-8",
                     loop.MetricsText()};
  }
  if (path == "/page") {
    if (!get) return Error(405, "use GET");
    auto url = parse::FormValue(query, "url");
    if (!url || url->empty()) return Error(400, "usage: /page?url=URL");
    auto page = loop.PageJson(*url);
    if (!page.ok()) {
      return Error(page.status().code() == Status::Code::kNotFound ? 404 : 400,
                   page.status().message());
    }
    return JsonReply(200, page.value());
  }
  if (path == "/signal") {
    return request.method == "POST" ? PostSignal(loop, request.body)
                                    : Error(405, "use POST");
  }
  if (path == "/control") return RouteControl(loop, request, get);
  return Error(404,
               "no such endpoint (/, /status, /metrics, /page, /signal, "
               "/control, /hosts, /history, /overview)");
}

}  // namespace freshd::daemon

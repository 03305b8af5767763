#include "sim/test_web.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

namespace freshd::sim {
namespace {

constexpr uint32_t kMaxIndexLinks = 10000;
constexpr uint32_t kMaxSitemapUrls = 50000;  // sitemaps.org limit

std::optional<uint64_t> ParseNumber(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    return std::nullopt;
  }
  return v;
}

std::string ETagOf(const Version& v) {
  return "\"v" + std::to_string(v.churn) + "-" + std::to_string(v.scroll) +
         "\"";
}

}  // namespace

TestWeb::TestWeb(WebModel model, TestWebOptions options)
    : model_(std::move(model)), options_(std::move(options)) {
  if (!(options_.day_seconds > 0)) options_.day_seconds = kDay;
}

double TestWeb::VirtualTime(double unix_now) const {
  return std::max(
      0.0, (unix_now - options_.start_unix) * kDay / options_.day_seconds);
}

double TestWeb::UnixTime(double virtual_time) const {
  return options_.start_unix + virtual_time * options_.day_seconds / kDay;
}

PageTimeline TestWeb::PageAt(uint32_t page, double v) const {
  PageTimeline out;
  for (Region r : {kChurn, kScroll}) {
    EventStream s(model_, page, r);
    while (s.next() <= v) {
      double t = s.next();
      out.last_change = std::max(out.last_change, t);
      SignalDraw d = TrueSignal(model_, page, r, s.count());
      if (d.emitted && t + d.delay <= v) {
        out.last_signal = std::max(out.last_signal, t + d.delay);
      }
      s.Advance();
    }
    (r == kChurn ? out.version.churn : out.version.scroll) = s.count();
  }
  FalseSignalStream f(model_, page);
  while (f.next() <= v) {
    out.last_signal = std::max(out.last_signal, f.next());
    f.Advance();
  }
  return out;
}

std::string TestWeb::HostName(uint32_t host) const {
  return "h" + std::to_string(host) + "." + options_.domain;
}

std::optional<uint32_t> TestWeb::HostId(std::string_view host_header) const {
  std::string_view name = host_header.substr(0, host_header.rfind(':'));
  std::string suffix = "." + options_.domain;
  if (name.size() <= suffix.size() + 1 || name.front() != 'h' ||
      name.substr(name.size() - suffix.size()) != suffix) {
    return std::nullopt;
  }
  auto id = ParseNumber(name.substr(1, name.size() - suffix.size() - 1));
  if (!id || *id >= model_.spec.hosts) return std::nullopt;
  return static_cast<uint32_t>(*id);
}

WebResponse TestWeb::Respond(std::string_view host_header,
                             std::string_view target,
                             std::string_view if_none_match,
                             double unix_now) const {
  double now = VirtualTime(unix_now);
  std::string_view path = target.substr(0, target.find('?'));
  std::string_view query;
  if (target.find('?') != std::string_view::npos) {
    query = target.substr(target.find('?') + 1);
  }
  if (path == "/truth") return Truth(query, now);
  std::optional<uint32_t> host = HostId(host_header);
  if (!host)
    return TextResponse(
        404, "unknown host (expected h<N>." + options_.domain + ")\n");
  if (path == "/") return Index(*host);
  if (path == "/robots.txt") return Robots(host_header);
  if (path == "/sitemap.xml") return Sitemap(*host, host_header, now);
  if (path == "/feed.xml" && options_.feeds) {
    return Feed(*host, host_header, if_none_match, now);
  }
  if (path.substr(0, 3) == "/p/") {
    auto page = ParseNumber(path.substr(3));
    if (page && *page < model_.pages.size() &&
        model_.pages[*page].host == *host) {
      return Page(*host, static_cast<uint32_t>(*page), if_none_match, now);
    }
  }
  return TextResponse(404, "not found\n");
}

WebResponse TestWeb::Index(uint32_t host) const {
  uint32_t per = model_.spec.pages_per_host;
  uint64_t first = uint64_t{host} * per;
  std::string body =
      "<!DOCTYPE html><html>" + Head(HostName(host)) + "<body><ul>\n";
  for (uint32_t i = 0; i < std::min(per, kMaxIndexLinks); ++i) {
    std::string id = std::to_string(first + i);
    body += "<li><a href=\"/p/" + id + "\">page " + id + "</a>\n";
  }
  body += "</ul></body></html>\n";
  WebResponse r;
  r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
  r.body = std::move(body);
  return r;
}

WebResponse TestWeb::Page(uint32_t host, uint32_t page, std::string_view inm,
                          double now) const {
  PageTimeline tl = PageAt(page, now);
  std::string etag = ETagOf(tl.version);
  WebResponse r;
  r.headers.emplace_back("ETag", etag);
  if (model_.pages[page].last_modified) {  // as the simulator's server
    r.headers.emplace_back("Last-Modified",
                           HttpDate(UnixTime(std::max(0.0, tl.last_change))));
  }
  if (!inm.empty() && EtagMatches(inm, etag)) {
    r.status = 304;
    return r;
  }
  uint32_t per = model_.spec.pages_per_host;
  uint64_t first = uint64_t{host} * per;
  uint64_t local = page - first;
  std::string body = "<!DOCTYPE html><html>" +
                     Head("page " + std::to_string(page)) + "<body><p>" +
                     PageText(model_, page, tl.version) + "</p><nav>";
  for (uint64_t step : {1, 2}) {
    body += "<a href=\"/p/" + std::to_string(first + (local + step) % per) +
            "\">next</a> ";
  }
  body += "<a href=\"/\">home</a></nav></body></html>\n";
  r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
  r.body = std::move(body);
  return r;
}

std::string TestWeb::Head(const std::string& title) const {
  std::string head =
      "<head><meta charset=\"utf-8\"><title>" + title + "</title>";
  if (options_.feeds) {
    head +=
        "<link rel=\"alternate\" type=\"application/atom+xml\" "
        "href=\"/feed.xml\">";
  }
  return head + "</head>";
}

WebResponse TestWeb::Feed(uint32_t host, std::string_view host_header,
                          std::string_view inm, double now) const {
  uint32_t per = model_.spec.pages_per_host;
  uint64_t first = uint64_t{host} * per;
  std::vector<std::pair<double, uint32_t>> changed;  // (last change, page)
  for (uint32_t i = 0; i < std::min(per, kMaxSitemapUrls); ++i) {
    uint32_t page = static_cast<uint32_t>(first + i);
    PageTimeline tl = PageAt(page, now);
    if (tl.last_change >= 0) changed.emplace_back(tl.last_change, page);
  }
  const size_t k = std::min<size_t>(
      changed.size(), std::clamp<uint32_t>(options_.feed_entries, 1, 1000));
  std::partial_sort(changed.begin(), changed.begin() + k, changed.end(),
                    std::greater<>());
  changed.resize(k);
  const std::string origin = "http://" + std::string(host_header);
  std::string entries;
  for (const auto& [when, page] : changed) {
    entries += "<entry><title>page " + std::to_string(page) +
               "</title><link href=\"" + origin + "/p/" + std::to_string(page) +
               "\"/><id>" + origin + "/p/" + std::to_string(page) +
               "</id><updated>" + IsoDate(UnixTime(when)) +
               "</updated></entry>\n";
  }
  // The feed's version: its newest entry and which pages it lists.
  uint64_t tag = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : entries) tag = (tag ^ c) * 1099511628211ull;
  const std::string etag = "\"f" + std::to_string(tag) + "\"";
  WebResponse r;
  r.headers.emplace_back("ETag", etag);
  if (!inm.empty() && EtagMatches(inm, etag)) {
    r.status = 304;
    return r;
  }
  r.headers.emplace_back("Content-Type", "application/atom+xml");
  r.body =
      "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
      "<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>" +
      HostName(host) + "</title><link rel=\"self\" href=\"" + origin +
      "/feed.xml\"/><id>" + origin + "/</id><updated>" +
      IsoDate(UnixTime(changed.empty() ? 0.0 : changed.front().first)) +
      "</updated>\n" + entries + "</feed>\n";
  return r;
}

WebResponse TestWeb::Robots(std::string_view host_header) const {
  return TextResponse(200, "User-agent: *\nAllow: /\nSitemap: http://" +
                               std::string(host_header) + "/sitemap.xml\n");
}

WebResponse TestWeb::Sitemap(uint32_t host, std::string_view host_header,
                             double now) const {
  uint32_t per = model_.spec.pages_per_host;
  uint64_t first = uint64_t{host} * per;
  std::string body =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset "
      "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  for (uint32_t i = 0; i < std::min(per, kMaxSitemapUrls); ++i) {
    uint32_t page = static_cast<uint32_t>(first + i);
    body += "<url><loc>http://" + std::string(host_header) + "/p/" +
            std::to_string(page) + "</loc>";
    PageTimeline tl = PageAt(page, now);
    if (tl.last_signal >= 0) {
      body += "<lastmod>" + IsoDate(UnixTime(tl.last_signal)) + "</lastmod>";
    }
    body += "</url>\n";
  }
  body += "</urlset>\n";
  WebResponse r;
  r.headers.emplace_back("Content-Type", "application/xml");
  r.body = std::move(body);
  return r;
}

WebResponse TestWeb::Truth(std::string_view query, double now) const {
  std::optional<uint64_t> page;
  if (query.substr(0, 5) == "page=") page = ParseNumber(query.substr(5));
  if (!page || *page >= model_.pages.size()) {
    return TextResponse(400, "usage: /truth?page=N (0 <= N < " +
                                 std::to_string(model_.pages.size()) + ")\n");
  }
  uint32_t p = static_cast<uint32_t>(*page);
  PageTimeline tl = PageAt(p, now);
  const SimPage& sp = model_.pages[p];
  nlohmann::json j;
  j["page"] = p;
  j["host"] = HostName(sp.host);
  j["virtual_days"] = now / kDay;
  j["etag"] = ETagOf(tl.version);
  j["changes"] = tl.version.churn + tl.version.scroll;
  j["last_change_unix"] =
      tl.last_change >= 0 ? nlohmann::json(UnixTime(tl.last_change)) : nullptr;
  j["change_rate_per_day"] = model_.ChangeRate(p);
  j["importance"] = sp.importance;
  j["recall"] = sp.recall;
  j["false_rate_per_day"] = sp.false_rate;
  WebResponse r;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = j.dump() + "\n";
  return r;
}

}  // namespace freshd::sim

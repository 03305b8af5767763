#include "sim/trace_web.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/ascii.h"
#include "parse/url.h"

namespace freshd::sim {
namespace {

constexpr double kDaySeconds = 86400;
constexpr uint64_t kSitemapUrls = 50000;  // sitemaps.org limit per file
constexpr std::string_view kIndexPrefix = "/_testweb/index/";
constexpr std::string_view kSitemapPrefix = "/_testweb/sitemap/";

std::optional<uint64_t> ParseNumber(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    return std::nullopt;
  }
  return v;
}

// A normalised URL's path and query may hold '&' (nothing else that HTML
// attributes or XML text must escape: NormalizeUrl escapes '"', '<', '>').
std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '\'') {
      out += "&#39;";
    } else {
      out += c;
    }
  }
  return out;
}

// "Host[:port]" -> lowercase host; "[v6]:port" keeps the brackets.
std::string HostWithoutPort(std::string_view host_header) {
  size_t colon = host_header.rfind(':');
  size_t bracket = host_header.rfind(']');
  if (colon != std::string_view::npos &&
      (bracket == std::string_view::npos || colon > bracket)) {
    host_header = host_header.substr(0, colon);
  }
  return AsciiLowerCopy(host_header);
}

WebResponse Html(std::string body) {
  WebResponse r;
  r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
  r.body = std::move(body);
  return r;
}

std::string IndexTarget(uint64_t n) {
  return std::string(kIndexPrefix) + std::to_string(n);
}

}  // namespace

TraceWeb::TraceWeb(Trace trace, TraceWebOptions options)
    : trace_(std::move(trace)), options_(std::move(options)) {
  if (!(options_.day_seconds > 0)) options_.day_seconds = kDaySeconds;
  if (options_.index_links == 0) options_.index_links = 1;
  if (std::isnan(options_.t0)) {
    options_.t0 = std::isnan(trace_.first_time) ? 0 : trace_.first_time;
  }
  for (const std::string& url : trace_.urls) {
    host_names_.push_back(HostWithoutPort(parse::UrlHost(url)));
  }
  std::sort(host_names_.begin(), host_names_.end());
  host_names_.erase(std::unique(host_names_.begin(), host_names_.end()),
                    host_names_.end());
  host_pages_.resize(host_names_.size());
  for (uint32_t i = 0; i < trace_.urls.size(); ++i) {
    host_pages_[*HostOf(parse::UrlHost(trace_.urls[i]))].push_back(i);
  }
  for (auto& pages : host_pages_) {
    // Stable: of two URLs with one target, the first in URL order wins.
    std::stable_sort(pages.begin(), pages.end(), [&](uint32_t a, uint32_t b) {
      return Target(a) < Target(b);
    });
    pages.shrink_to_fit();
  }
}

double TraceWeb::TraceTime(double unix_now) const {
  return options_.t0 + std::max(0.0, unix_now - options_.start_unix) *
                           kDaySeconds / options_.day_seconds;
}

double TraceWeb::UnixTime(double trace_time) const {
  return options_.start_unix +
         (trace_time - options_.t0) * options_.day_seconds / kDaySeconds;
}

std::string_view TraceWeb::Target(uint32_t page) const {
  return parse::UrlPathAndQuery(trace_.urls[page]);
}

TracePageState TraceWeb::PageAt(uint32_t page, double t) const {
  const TracePage& p = trace_.pages[page];
  TracePageState s;
  s.created = p.created <= t;
  s.deleted = p.deleted <= t;
  auto end = std::upper_bound(p.changes.begin(), p.changes.end(), t);
  s.version = static_cast<uint64_t>(end - p.changes.begin());
  if (s.version > 0) {
    s.last_change = *(end - 1);
  } else if (s.created) {
    s.last_change = p.created;
  }
  return s;
}

std::optional<uint32_t> TraceWeb::HostOf(std::string_view host_header) const {
  std::string name = HostWithoutPort(host_header);
  auto it = std::lower_bound(host_names_.begin(), host_names_.end(), name);
  if (it == host_names_.end() || *it != name) return std::nullopt;
  return static_cast<uint32_t>(it - host_names_.begin());
}

std::optional<uint32_t> TraceWeb::FindPage(std::string_view host_header,
                                           std::string_view target) const {
  std::optional<uint32_t> host = HostOf(host_header);
  if (!host) return std::nullopt;
  const auto& pages = host_pages_[*host];
  auto it = std::lower_bound(
      pages.begin(), pages.end(), target,
      [&](uint32_t page, std::string_view t) { return Target(page) < t; });
  if (it == pages.end() || Target(*it) != target) return std::nullopt;
  return *it;
}

std::vector<uint32_t> TraceWeb::Existing(uint32_t host, uint64_t skip,
                                         uint64_t limit, double t) const {
  std::vector<uint32_t> out;
  const auto& pages = host_pages_[host];
  for (size_t i = 0; i < pages.size() && out.size() < limit; ++i) {
    // A later duplicate of a target is never served: not listed either.
    if (i > 0 && Target(pages[i]) == Target(pages[i - 1])) continue;
    const TracePage& p = trace_.pages[pages[i]];
    if (!(p.created <= t && t < p.deleted)) continue;
    if (skip > 0) {
      --skip;
      continue;
    }
    out.push_back(pages[i]);
  }
  return out;
}

uint64_t TraceWeb::CountExisting(uint32_t host, double t) const {
  return Existing(host, 0, UINT64_MAX, t).size();
}

std::vector<uint32_t> TraceWeb::IndexPage(uint32_t host, uint64_t n,
                                          double t) const {
  if (host >= host_pages_.size() || n == 0) return {};
  return Existing(host, (n - 1) * options_.index_links, options_.index_links,
                  t);
}

WebResponse TraceWeb::Respond(std::string_view host_header,
                              std::string_view target,
                              std::string_view if_none_match,
                              double unix_now) const {
  const double t = TraceTime(unix_now);
  std::optional<uint32_t> host = HostOf(host_header);
  if (!host) return TextResponse(404, "unknown host\n");
  if (std::optional<uint32_t> page = FindPage(host_header, target)) {
    return Page(*page, if_none_match, t);
  }
  if (target == "/") return Index(*host, 1, t);
  if (target == "/robots.txt") {
    return TextResponse(200, "User-agent: *\nAllow: /\nSitemap: http://" +
                                 std::string(host_header) + "/sitemap.xml\n");
  }
  if (target == "/sitemap.xml") {
    return Sitemap(*host, host_header, std::nullopt, t);
  }
  if (target.substr(0, kIndexPrefix.size()) == kIndexPrefix) {
    std::optional<uint64_t> n = ParseNumber(target.substr(kIndexPrefix.size()));
    if (n && *n >= 1) return Index(*host, *n, t);
  }
  if (target.substr(0, kSitemapPrefix.size()) == kSitemapPrefix &&
      target.size() > kSitemapPrefix.size() + 4 &&
      target.substr(target.size() - 4) == ".xml") {
    std::optional<uint64_t> n = ParseNumber(target.substr(
        kSitemapPrefix.size(), target.size() - kSitemapPrefix.size() - 4));
    if (n && *n >= 1) return Sitemap(*host, host_header, *n, t);
  }
  return TextResponse(404, "not found\n");
}

WebResponse TraceWeb::Page(uint32_t page, std::string_view inm,
                           double t) const {
  TracePageState s = PageAt(page, t);
  if (!s.created) return TextResponse(404, "not created yet\n");
  if (s.deleted) return TextResponse(410, "deleted\n");
  const std::string etag = "\"t" + std::to_string(s.version) + "\"";
  WebResponse r;
  r.headers.emplace_back("ETag", etag);
  r.headers.emplace_back(
      "Last-Modified",
      HttpDate(UnixTime(std::max(options_.t0, s.last_change))));
  if (!inm.empty() && EtagMatches(inm, etag)) {
    r.status = 304;
    return r;
  }
  const std::string& url = trace_.urls[page];
  r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
  r.body = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" +
           Escape(Target(page)) + "</title></head><body><p>" + Escape(url) +
           ", version " + std::to_string(s.version) + "</p><nav><a href=\"" +
           IndexTarget(1) + "\">index</a></nav></body></html>\n";
  return r;
}

WebResponse TraceWeb::Index(uint32_t host, uint64_t n, double t) const {
  std::vector<uint32_t> pages = IndexPage(host, n, t);
  // One more than a page holds: is there a next index page?
  bool more = !Existing(host, n * options_.index_links, 1, t).empty();
  if (pages.empty() && n > 1) return TextResponse(404, "no such index page\n");
  std::string body =
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
      "<title>" +
      host_names_[host] + " index " + std::to_string(n) +
      "</title></head><body><ul>\n";
  for (uint32_t page : pages) {
    std::string target = Escape(Target(page));
    body += "<li><a href=\"" + target + "\">" + target + "</a>\n";
  }
  body += "</ul><nav>";
  if (n > 1) body += "<a href=\"" + IndexTarget(n - 1) + "\">previous</a> ";
  if (more) body += "<a href=\"" + IndexTarget(n + 1) + "\">next</a>";
  body += "</nav></body></html>\n";
  return Html(std::move(body));
}

WebResponse TraceWeb::Sitemap(uint32_t host, std::string_view host_header,
                              std::optional<uint64_t> part, double t) const {
  const std::string origin = "http://" + std::string(host_header);
  const uint64_t count = CountExisting(host, t);
  std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  WebResponse r;
  r.headers.emplace_back("Content-Type", "application/xml");
  if (!part && count > kSitemapUrls) {
    body +=
        "<sitemapindex "
        "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
    for (uint64_t n = 1; (n - 1) * kSitemapUrls < count; ++n) {
      body += "<sitemap><loc>" + origin + std::string(kSitemapPrefix) +
              std::to_string(n) + ".xml</loc></sitemap>\n";
    }
    r.body = body + "</sitemapindex>\n";
    return r;
  }
  const uint64_t n = part.value_or(1);
  std::vector<uint32_t> pages =
      Existing(host, (n - 1) * kSitemapUrls, kSitemapUrls, t);
  if (part && pages.empty()) return TextResponse(404, "no such sitemap\n");
  body += "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  for (uint32_t page : pages) {
    body += "<url><loc>" + origin + Escape(Target(page)) + "</loc>";
    TracePageState s = PageAt(page, t);
    if (options_.lastmod && std::isfinite(s.last_change)) {
      body += "<lastmod>" +
              IsoDate(UnixTime(std::max(options_.t0, s.last_change))) +
              "</lastmod>";
    }
    body += "</url>\n";
  }
  r.body = body + "</urlset>\n";
  return r;
}

}  // namespace freshd::sim

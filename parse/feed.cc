// The feed formats through the sitemap reader (see feed.h).

#include "parse/feed.h"

#include <algorithm>
#include <utility>

#include "parse/link_header.h"
#include "parse/sitemap.h"
#include "parse/url.h"

namespace freshd::parse {
namespace {

// `ref` resolved against `base` (or taken as absolute without one) and
// normalized, if an http(s) URL; empty otherwise.
std::string LinkUrl(std::string_view base, std::string_view ref) {
  Result<std::string> url =
      base.empty() ? NormalizeUrl(ref) : ResolveUrl(base, ref);
  if (!url.ok() || url->size() > kMaxUrlLength) return {};
  const std::string_view scheme = UrlScheme(*url);
  if (scheme != "http" && scheme != "https") return {};
  return std::move(url).value();
}

void AddHub(std::string url, std::vector<std::string>* hubs) {
  if (url.empty() || hubs->size() >= kMaxFeedHubLinks) return;
  if (std::find(hubs->begin(), hubs->end(), url) != hubs->end()) return;
  hubs->push_back(std::move(url));
}

}  // namespace

const char* FeedFormatName(FeedFormat format) {
  switch (format) {
    case FeedFormat::kRss:
      return "rss";
    case FeedFormat::kAtom:
      return "atom";
  }
  return "?";
}

std::optional<int64_t> FeedResult::newest() const {
  std::optional<int64_t> best;
  for (const FeedEntry& e : entries) {
    if (e.updated && (!best || *e.updated > *best)) best = e.updated;
  }
  return best;
}

Result<FeedResult> ParseFeed(std::string_view bytes,
                             const FeedOptions& options) {
  SitemapOptions o;
  o.sitemap_url = options.feed_url;
  o.cross_host_allowed = options.cross_host_allowed;
  o.max_urls = options.max_entries;
  o.max_bytes = options.max_bytes;
  auto parsed = ParseSitemap(bytes, o);
  if (!parsed.ok()) {
    if (parsed.status().code() != Status::Code::kInvalidArgument)
      return parsed.status();
    std::string why = parsed.status().message();
    if (why.rfind("not a sitemap", 0) == 0) why = "not a feed" + why.substr(13);
    return Status::InvalidArgument(why);
  }
  SitemapResult& s = parsed.value();
  FeedResult out;
  switch (s.format) {
    case SitemapFormat::kRss:
      out.format = FeedFormat::kRss;
      break;
    case SitemapFormat::kAtom:
      out.format = FeedFormat::kAtom;
      break;
    default:
      return Status::InvalidArgument(std::string("not a feed: a sitemap (") +
                                     SitemapFormatName(s.format) +
                                     "), not RSS or Atom");
  }
  out.entries.reserve(s.entries.size());
  for (SitemapEntry& e : s.entries) {
    out.entries.push_back({std::move(e.loc), e.lastmod});
  }
  for (const std::string& hub : s.hub_links) {
    AddHub(LinkUrl(options.feed_url, hub), &out.hubs);
  }
  if (!s.self_link.empty())
    out.self_url = LinkUrl(options.feed_url, s.self_link);
  out.status = std::move(s.status);
  out.dropped_invalid = s.dropped_invalid;
  out.dropped_cross_host = s.dropped_cross_host;
  return out;
}

void UseLinkHeaders(std::string_view raw_head, std::string_view base_url,
                    FeedResult* feed) {
  std::vector<std::string> hubs;
  std::string self;
  for (std::string_view field : LinkHeaderValues(raw_head)) {
    for (const LinkValue& link : ParseLinkHeader(field)) {
      if (link.HasRel("hub")) AddHub(LinkUrl(base_url, link.target), &hubs);
      if (link.HasRel("self") && self.empty()) {
        self = LinkUrl(base_url, link.target);
      }
    }
  }
  if (hubs.empty()) return;
  feed->hubs = std::move(hubs);
  if (!self.empty()) feed->self_url = std::move(self);
}

}  // namespace freshd::parse

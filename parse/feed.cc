// The feed formats through the sitemap reader (see feed.h).

#include "parse/feed.h"

#include <utility>

#include "parse/sitemap.h"

namespace freshd::parse {

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
  out.status = std::move(s.status);
  out.dropped_invalid = s.dropped_invalid;
  out.dropped_cross_host = s.dropped_cross_host;
  return out;
}

}  // namespace freshd::parse

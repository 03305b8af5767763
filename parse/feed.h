// RSS and Atom feeds as change-signal sources: RSS 2.0 (<item><link>, else
// <guid>, with <pubDate> RFC 822 dates), RSS 1.0 / RDF (<item rdf:about>,
// <dc:date>) and Atom 1.0 (<entry><link href> with no rel or
// rel="alternate", <updated>, else <published>, W3C datetimes). Each entry
// is a page URL and the time the feed says it changed.
//
// The XML is read by the sitemap reader (parse/sitemap.h: libxml2 SAX2 push
// parser, no network, no DTD, any DOCTYPE refused, so no XXE and no entity
// expansion; gzip by magic bytes), with feed-sized bounds: max_bytes of
// (decompressed) input, max_entries entries, and entry URLs over
// kMaxUrlLength (parse/url.h) dropped. Relative links are resolved against
// feed_url. A sitemap (<urlset>, <sitemapindex>, text) is not a feed.
// Thread-safety: ParseFeed is reentrant; call it from any thread.

#ifndef FRESHD_PARSE_FEED_H_
#define FRESHD_PARSE_FEED_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace freshd::parse {

enum class FeedFormat { kRss, kAtom };  // kRss: RSS 0.9x, 1.0 (RDF) and 2.0
const char* FeedFormatName(FeedFormat format);  // "rss", "atom"

struct FeedEntry {
  std::string url;                 // normalized absolute http(s) URL
  std::optional<int64_t> updated;  // UTC seconds since the epoch
};

struct FeedOptions {
  // Where the feed was fetched from (absolute http(s)): relative links are
  // resolved against it and the host rule below applies. Empty: relative
  // links are dropped and no host filtering is done.
  std::string feed_url;
  // Called with the (lowercase) host of an entry whose host differs from
  // feed_url's; true keeps it. Unset: every cross-host entry is dropped.
  std::function<bool(std::string_view host)> cross_host_allowed;
  size_t max_entries = 1000;           // entries returned at most
  size_t max_bytes = 4 * 1024 * 1024;  // of uncompressed input
};

struct FeedResult {
  FeedFormat format = FeedFormat::kRss;
  std::vector<FeedEntry> entries;  // in document order
  // OK, or why parsing stopped early while keeping `entries`:
  // ResourceExhausted (max_entries / max_bytes), Corruption (malformed or
  // truncated XML, broken gzip stream).
  Status status;
  size_t dropped_invalid = 0;     // links that are not valid http(s) URLs
  size_t dropped_cross_host = 0;  // removed by the host rule
  // WebSub discovery (W3C WebSub §4): the hubs the feed names (normalized
  // absolute http(s) URLs, at most kMaxFeedHubLinks, duplicates dropped) and
  // its self URL (the topic; empty when not named), from the feed's own
  // <link rel="hub"|"self"> / <atom:link> (resolved against feed_url), or,
  // after UseLinkHeaders, from the response's Link headers.
  std::vector<std::string> hubs;
  std::string self_url;
  // The newest entry date, if any entry has one.
  std::optional<int64_t> newest() const;
};

// Parses a feed from `bytes` (possibly gzip-compressed). Returns a
// FeedResult (see its `status` for partial success), or InvalidArgument
// when the input is not an RSS or Atom feed (a sitemap, HTML, binary data,
// a DOCTYPE) or is malformed before anything could be read, or when
// options.feed_url is not an absolute http(s) URL. Never throws.
Result<FeedResult> ParseFeed(std::string_view bytes,
                             const FeedOptions& options);

// WebSub §4: a subscriber MUST use the HTTP Link headers when present, and
// may look in the body otherwise. When the Link fields of `raw_head` (a
// response head, fetch::FetchResult::raw_headers) name at least one hub,
// they replace feed->hubs, and their rel="self" (if any) feed->self_url;
// targets are resolved against `base_url` (where the feed was fetched).
void UseLinkHeaders(std::string_view raw_head, std::string_view base_url,
                    FeedResult* feed);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_FEED_H_

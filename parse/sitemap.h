// Sitemap parsing (sitemaps.org protocol 0.9 and the feeds it allows):
// XML <urlset> and <sitemapindex> (any or no namespace), plain text (one URL
// per line), RSS 2.0 / RSS 1.0 <item><link> (else rdf:about, else guid)
// with <pubDate> or <dc:date>, and Atom <entry><link> with <updated> (else
// <published>); parse/feed.h reads only the feed formats. gzip is recognized by
// its magic bytes, never by name or Content-Type. A UTF-8 BOM and leading
// whitespace are skipped.
//
// XML is read as a stream with libxml2's SAX2 push parser (no DOM): no
// network (XML_PARSE_NONET), no DTD loading, no entity substitution, no
// XInclude, and any DOCTYPE is refused before its internal subset is read,
// so XXE and entity-expansion bombs cannot happen; errors go to a
// per-parser structured handler (no global libxml2 state is touched).
// Bounds: max_urls entries and max_bytes of (decompressed) input; a loc over
// kMaxUrlLength is dropped. On a limit or a malformed/truncated document
// the entries read so far are returned together with a non-ok `status`.
// Thread-safety: ParseSitemap is reentrant; call it from any thread.

#ifndef FRESHD_PARSE_SITEMAP_H_
#define FRESHD_PARSE_SITEMAP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace freshd::parse {

enum class SitemapFormat { kUrlset, kSitemapIndex, kText, kRss, kAtom };
const char* SitemapFormatName(SitemapFormat format);  // "urlset", ...

struct SitemapEntry {
  enum class Kind { kUrl, kSitemap };  // kSitemap: from a <sitemapindex>
  std::string loc;                     // normalized absolute http(s) URL
  std::optional<int64_t> lastmod;      // UTC seconds since the epoch
  Kind kind = Kind::kUrl;
};

struct SitemapOptions {
  // Where the sitemap was fetched from (absolute http(s)); relative locs in
  // XML are resolved against it (a text sitemap must hold full URLs) and
  // the host rule applies to page URLs (not to the child sitemaps of an
  // index: their own URLs are checked when each child is parsed). Empty: no
  // resolution (relative locs are dropped as invalid) and no filtering.
  std::string sitemap_url;
  // Called with the (lowercase) host of an entry whose host differs from
  // sitemap_url's; true keeps it. sitemaps.org allows that only when the
  // other host's robots.txt lists this sitemap, which the caller knows.
  // Unset: every cross-host entry is dropped.
  std::function<bool(std::string_view host)> cross_host_allowed;
  // sitemaps.org location rule: keep only URLs under the directory of
  // sitemap_url (e.g. /catalog/sitemap.xml covers /catalog/*). Off by
  // default: many sites keep sitemaps in a subfolder.
  bool require_same_path_prefix = false;
  size_t max_urls = 50000;              // entries returned at most
  size_t max_bytes = 50 * 1024 * 1024;  // of uncompressed input
};

struct SitemapResult {
  SitemapFormat format = SitemapFormat::kUrlset;
  std::vector<SitemapEntry> entries;  // in document order
  // OK, or why parsing stopped early while keeping `entries`:
  // ResourceExhausted (max_urls / max_bytes reached), Corruption (malformed
  // or truncated XML, broken gzip stream).
  Status status;
  size_t dropped_invalid = 0;       // locs that are not valid http(s) URLs
  size_t dropped_cross_host = 0;    // removed by the host rule
  size_t dropped_outside_path = 0;  // removed by require_same_path_prefix
  // Feeds only: the feed-level <link rel="hub" href> / <atom:link ...> and
  // rel="self" (WebSub §4), as written (unresolved), at most
  // kMaxFeedHubLinks hubs of at most kMaxUrlLength bytes; the first self.
  std::vector<std::string> hub_links;
  std::string self_link;
};

inline constexpr size_t kMaxFeedHubLinks = 8;

// Parses a sitemap from `bytes` (possibly gzip-compressed).
// Returns a SitemapResult (see its `status` for partial success), or an
// InvalidArgument error when the input is not recognizably a sitemap
// (e.g. binary data, an XML root that is none of the formats above) or is
// malformed before anything could be read, and InvalidArgument for a bad
// options.sitemap_url. Never throws.
Result<SitemapResult> ParseSitemap(std::string_view bytes,
                                   const SitemapOptions& options);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_SITEMAP_H_

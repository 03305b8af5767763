// HTML page -> visible UTF-8 text, links and robots signals, in one streaming
// pass. The input is the raw HTTP body plus its Content-Type and URL; the
// output is what a browser would show as text (no script, style, noscript,
// template, head/title or comments; character references decoded; block
// elements separate words), the document's links resolved against the URL and
// the first <base href> (feeds named by <link rel=alternate
// type=application/rss+xml|atom+xml>, at most max_feeds, among them),
// <link rel=canonical>, meta robots / X-Robots-Tag and the charset used.
// Non-UTF-8 pages are converted (parse/charset.h).
//
// Why our own tokenizer (parse/html_tokenizer.h) rather than libxml2: on the
// python3-doc corpus (530 pages, 50.7 MB) libxml2's htmlReadMemory + a text
// walk measured 20.8 MB per CPU-second, capping a core at ~1,000 pages/s;
// this tokenizer builds no tree, copies valid UTF-8 input not at all and
// measured 141 MB per CPU-second (6.8x), with identical word 4-shingle sets
// on all 530 pages (mean Jaccard 1.0000). bench/parse/RESULTS-parse.md.
//
// Thread-safety: ExtractHtml is a pure function; concurrent calls are safe.

#ifndef FRESHD_PARSE_HTML_EXTRACT_H_
#define FRESHD_PARSE_HTML_EXTRACT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace freshd::parse {

// Where a link was found.
enum class LinkKind : uint8_t {
  kAnchor,     // <a href>, <area href>
  kAlternate,  // <link rel=alternate|next|prev>
  kCanonical,  // <link rel=canonical>
  kFrame,      // <frame src>, <iframe src>
  // <link rel=alternate type=application/rss+xml|application/atom+xml>: a
  // feed of this site's changes (parse/feed.h), not a page.
  kFeed,
};
const char* LinkKindName(LinkKind kind);  // "a", "alternate", ...

struct Link {
  std::string url;  // resolved and normalized (parse/url.h), no fragment
  LinkKind kind = LinkKind::kAnchor;
  bool nofollow = false;  // rel=nofollow on the element itself
};

// Every size an outsider controls is capped here. Exceeding an input or
// output cap truncates (ExtractedPage::truncated) rather than failing.
struct ExtractLimits {
  size_t max_input_bytes = 10u << 20;  // body bytes looked at
  size_t max_text_bytes = 4u << 20;    // UTF-8 bytes of `text`
  size_t max_links = 10000;            // links kept (after de-duplication)
  size_t max_feeds = 8;                // kFeed links kept, of max_links
  size_t max_url_bytes = 4096;         // longer hrefs are dropped
  size_t max_title_bytes = 1024;
  // Unused, kept for compatibility: the extractor keeps no element stack
  // (only a counter of open <template>s), so nesting costs O(1) memory.
  int max_depth = 256;
};

// The robots directives this crawler acts on (meta robots, X-Robots-Tag).
struct RobotsDirectives {
  bool noindex = false;
  bool nofollow = false;
};

struct ExtractedPage {
  std::string text;   // visible text; words separated by ' ', blocks by '\n'
  std::string title;  // <title> text, whitespace-collapsed (not in `text`)
  std::vector<Link> links;  // document order, de-duplicated by (url, kind)
  std::string canonical;    // resolved <link rel=canonical href>, or empty
  std::string base_url;     // the URL links were resolved against
  bool noindex = false;     // meta robots / X-Robots-Tag noindex or none
  bool nofollow = false;    // meta robots / X-Robots-Tag nofollow or none
  std::string charset;      // encoding used to decode, e.g. "utf-8"
  bool truncated = false;   // an ExtractLimits cap cut something off
};

// Extracts text, links and signals from an HTML body.
//   content_type: the HTTP Content-Type value ("" if unknown); its charset
//     parameter wins over <meta charset> unless a BOM is present.
//   url: the absolute URL the body came from, the base for links; may be
//     empty (then relative links resolve only against an absolute <base>,
//     and are dropped otherwise).
//   x_robots_tag: the X-Robots-Tag header value(s), comma-joined; values
//     scoped to a named user agent ("otherbot: noindex") are ignored.
// Returns the page on success: malformed markup is not an error (it is
// tokenized as a browser would), undecodable bytes become U+FFFD and an
// unknown charset label falls back to windows-1252. Fails with
// InvalidArgument only if `url` is non-empty and not an absolute URL.
Result<ExtractedPage> ExtractHtml(std::string_view body,
                                  std::string_view content_type,
                                  std::string_view url,
                                  const ExtractLimits& limits = {},
                                  std::string_view x_robots_tag = {});

// Parses a robots directive list ("noindex, nofollow", "none", "all") as found
// in <meta name=robots content=...> and X-Robots-Tag; unknown tokens and
// agent-scoped parts ("googlebot: noindex") are ignored. Never fails.
RobotsDirectives ParseRobotsDirectives(std::string_view value);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_HTML_EXTRACT_H_

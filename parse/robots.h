// robots.txt per RFC 9309 (Robots Exclusion Protocol), modelled on
// google/robotstxt: parsing (robots_parser.h, events to a handler) is split
// from deciding (RobotsTxt below, one consumer of those events).
//
// Semantics: groups start at one or more User-agent lines; groups naming the
// same product token are merged; a crawler obeys the merged groups for its
// token (case-insensitive) or, if none names it, the merged "*" groups.
// Allow/Disallow patterns support '*' (any octets) and a trailing '$' (end
// of path). The longest matching pattern (in octets) wins; on a tie Allow
// wins; no match (and /robots.txt itself) means allowed. Patterns are compared
// octet-wise after percent-encoding non-ASCII bytes and uppercasing %xx
// escapes. IsAllowed takes a path as NormalizeUrl writes it and compares it
// with each pattern written the same way (escapes of unreserved characters
// decoded, bytes a URL may not hold raw escaped), so "Allow: /%62az" and
// the URL /%62az (normalized: /baz) meet; IsUrlAllowed compares a URL as
// given with the patterns as written, as google/robotstxt does. Leniency as
// Google's: missing ':' (key and value separated by blanks), common typos
// ("useragent", "dissallow", ...), partial/whole UTF-8 BOM, CR, LF and CRLF
// line ends. A UTF-16 BOM makes the body be transcoded. Bounds: the first
// kMaxRobotsBytes are parsed, lines are cut at kMaxRobotsLineBytes, and at most
// kMaxRobotsAnomalies are kept. Like Google and crawler-commons, "Allow:
// /d/index.html" also allows "/d/" (the URL that serves that page). Crawl-delay
// (non-standard) belongs to the group it appears in. Product tokens may contain
// digits ("MJ12bot"). Thread-safety: a RobotsTxt is immutable after
// ParseRobotsTxt; its const methods are safe to call concurrently.

#ifndef FRESHD_PARSE_ROBOTS_H_
#define FRESHD_PARSE_ROBOTS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace freshd::parse {

inline constexpr size_t kMaxRobotsBytes = 500 * 1024;  // RFC 9309 2.5
// Longest line kept (the rest of a longer line is ignored), as Google.
inline constexpr size_t kMaxRobotsLineBytes = 2083 * 8 - 1;
inline constexpr size_t kMaxRobotsAnomalies = 100;
inline constexpr size_t kMaxRobotsSitemaps = 1000;

// Something odd about one line; parsing went on regardless.
struct RobotsAnomaly {
  int line = 0;         // 1-based; 0 for the whole file
  std::string message;  // e.g. "missing ':' separator", "unknown directive"
};

// One Allow/Disallow rule after normalization (see the file comment).
struct RobotsRule {
  bool allow = false;
  std::string pattern;  // escaped; may contain '*' and a trailing '$'
  int line = 0;
  std::string normalized;  // `pattern` with escapes as NormalizeUrl's
};

// The rules of one group as written (before merging by product token).
struct RobotsGroup {
  std::vector<std::string> agents;  // product tokens, lowercase; "*" global
  std::vector<RobotsRule> rules;
  std::optional<double> crawl_delay_s;  // last valid Crawl-delay, seconds
};

class RobotsTxt {
 public:
  RobotsTxt() = default;  // an empty robots.txt: everything allowed

  // True if `product_token` (e.g. "freshd"; compared case-insensitively)
  // may fetch `path_and_query` ("/a/b?c", as from UrlPathAndQuery of a
  // normalized URL; "" means "/"), matched against the normalized patterns.
  // Linear in the size of the applicable rules times the path length.
  bool IsAllowed(std::string_view product_token,
                 std::string_view path_and_query) const;

  // As IsAllowed for a full URL: its path, parameters and query are taken
  // as Google's GetPathParamsQuery does (fragment dropped; a URL with no
  // path means "/"), matched against the patterns as written. Accepts any
  // string; does not normalize.
  bool IsUrlAllowed(std::string_view product_token, std::string_view url) const;

  // The Crawl-delay of the groups that apply to `product_token` (largest if
  // several give one), or nullopt. Values are clamped to [0, 86400].
  std::optional<double> CrawlDelay(std::string_view product_token) const;

  // Sitemap URLs in file order, duplicates removed, exactly as written
  // (may be relative). Capped at kMaxRobotsSitemaps.
  const std::vector<std::string>& sitemaps() const { return sitemaps_; }

  // Sitemap URLs resolved against `robots_url` (absolute http(s)) and
  // normalized; entries that do not resolve are skipped.
  std::vector<std::string> ResolvedSitemaps(std::string_view robots_url) const;

  const std::vector<RobotsGroup>& groups() const { return groups_; }
  const std::vector<RobotsAnomaly>& anomalies() const { return anomalies_; }
  bool truncated() const { return truncated_; }  // body > kMaxRobotsBytes

 private:
  bool Decide(std::string_view product_token, std::string_view path,
              bool normalized) const;

  friend RobotsTxt ParseRobotsTxt(std::string_view body);
  friend class RobotsTxtBuilder;

  std::vector<RobotsGroup> groups_;
  std::vector<std::string> sitemaps_;
  std::vector<RobotsAnomaly> anomalies_;
  bool truncated_ = false;
};

// Parses any bytes; never fails (an unparsable file yields no rules, i.e.
// everything allowed, plus anomalies).
RobotsTxt ParseRobotsTxt(std::string_view body);

// True if `token` is a product token a crawler may use to identify itself:
// non-empty and only ASCII letters, '-' and '_' (RFC 9309 2.2.1).
bool IsValidProductToken(std::string_view token);

// The path+params+query of `url` as google/robotstxt's GetPathParamsQuery:
// "http://a.b/c?d#e" -> "/c?d", "a.b" -> "/", "" -> "/".
std::string RobotsPathOfUrl(std::string_view url);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_ROBOTS_H_

// RobotsTxt: builds groups from the tokenizer's events and decides
// allow/disallow (see robots.h).

#include "parse/robots.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "parse/robots_parser.h"
#include "parse/text_utf8.h"
#include "parse/url.h"

namespace freshd::parse {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";
constexpr double kMaxCrawlDelayS = 86400.0;

// Google's MaybeEscapePattern: non-ASCII bytes are percent-encoded and
// existing escapes get uppercase hex; nothing is decoded.
std::string EscapePattern(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    unsigned char u = static_cast<unsigned char>(in[i]);
    if (u == '%' && i + 2 < in.size() && AsciiHexValue(in[i + 1]) >= 0 &&
        AsciiHexValue(in[i + 2]) >= 0) {
      out.push_back('%');
      out.push_back(kHex[AsciiHexValue(in[i + 1])]);
      out.push_back(kHex[AsciiHexValue(in[i + 2])]);
      i += 2;
    } else if (u >= 0x80) {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    } else {
      out.push_back(static_cast<char>(u));
    }
  }
  return out;
}

bool IsUnreservedByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
}

// An escaped pattern (EscapePattern) as NormalizeUrl would write the same
// path: escapes of unreserved characters decoded (RFC 3986 6.2.2.2), a '%'
// without two hex digits as %25, and bytes a normalized URL never holds raw
// (controls, space, '"<>\^`{|}') escaped. '*' and '$' stay operators.
std::string NormalizePatternEscapes(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    unsigned char u = static_cast<unsigned char>(escaped[i]);
    if (u == '%' && i + 2 < escaped.size() &&
        AsciiHexValue(escaped[i + 1]) >= 0 &&
        AsciiHexValue(escaped[i + 2]) >= 0) {
      const char decoded = static_cast<char>(
          AsciiHexValue(escaped[i + 1]) * 16 + AsciiHexValue(escaped[i + 2]));
      if (IsUnreservedByte(decoded)) {
        out.push_back(decoded);
      } else {
        out.append(escaped.substr(i, 3));
      }
      i += 2;
      continue;
    }
    const bool raw =
        u > 0x20 && u < 0x7f && u != '%' &&
        std::string_view("\"<>\\^`{|}").find(static_cast<char>(u)) ==
            std::string_view::npos;
    if (raw) {
      out.push_back(static_cast<char>(u));
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    }
  }
  return out;
}

// Leftmost occurrence of `needle` in `hay` at or after `from`, in
// O(|hay| + |needle|) (Knuth-Morris-Pratt) so that hostile patterns cannot
// make matching quadratic. Short needles use the library search.
size_t FindLinear(std::string_view hay, std::string_view needle, size_t from) {
  if (needle.size() <= 16) return hay.find(needle, from);
  std::vector<size_t> fail(needle.size(), 0);
  for (size_t i = 1, k = 0; i < needle.size(); ++i) {
    while (k > 0 && needle[i] != needle[k]) k = fail[k - 1];
    if (needle[i] == needle[k]) ++k;
    fail[i] = k;
  }
  for (size_t i = from, k = 0; i < hay.size(); ++i) {
    while (k > 0 && hay[i] != needle[k]) k = fail[k - 1];
    if (hay[i] == needle[k]) ++k;
    if (k == needle.size()) return i + 1 - needle.size();
  }
  return std::string_view::npos;
}

// RFC 9309 2.2.3: does `pattern` ('*' wildcards, optional final '$') match
// the start of `path` (all of it with '$')? Leftmost placement of each
// literal segment is optimal for '*'-only globs, so no backtracking.
bool PatternMatches(std::string_view pattern, std::string_view path) {
  bool anchored = !pattern.empty() && pattern.back() == '$';
  if (anchored) pattern.remove_suffix(1);
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) {
    return anchored ? path == pattern : path.starts_with(pattern);
  }
  if (!path.starts_with(pattern.substr(0, star))) return false;
  size_t pos = star;
  std::string_view rest = pattern.substr(star + 1);
  while (true) {
    size_t next = rest.find('*');
    if (next == std::string_view::npos) {
      if (anchored) {
        return path.size() - pos >= rest.size() && path.ends_with(rest);
      }
      return rest.empty() ||
             FindLinear(path, rest, pos) != std::string_view::npos;
    }
    std::string_view seg = rest.substr(0, next);
    if (!seg.empty()) {
      size_t found = FindLinear(path, seg, pos);
      if (found == std::string_view::npos) return false;
      pos = found + seg.size();
    }
    rest = rest.substr(next + 1);
  }
}

// The product token of a User-agent value: its leading run of letters,
// digits, '-' and '_' ("Googlebot/2.1" -> "googlebot"), lowercased; "*"
// for the global group. RFC 9309's grammar has no digits, but real tokens
// do ("MJ12bot"); Google would cut those at the first digit.
std::string ExtractAgent(std::string_view value) {
  if (!value.empty() && value[0] == '*' &&
      (value.size() == 1 || value[1] == ' ' || value[1] == '\t')) {
    return "*";
  }
  size_t n = 0;
  while (n < value.size() && ((value[n] >= 'a' && value[n] <= 'z') ||
                              (value[n] >= 'A' && value[n] <= 'Z') ||
                              (value[n] >= '0' && value[n] <= '9') ||
                              value[n] == '-' || value[n] == '_')) {
    ++n;
  }
  return AsciiLowerCopy(value.substr(0, n));
}

// UTF-16 (after its BOM) to UTF-8; unpaired surrogates become U+FFFD.
std::string Utf16ToUtf8(std::string_view in, bool big_endian) {
  std::string out;
  out.reserve(in.size());
  auto unit = [&](size_t i) -> uint32_t {
    auto b0 = static_cast<unsigned char>(in[i]);
    auto b1 = static_cast<unsigned char>(in[i + 1]);
    return big_endian ? (b0 << 8 | b1) : (b1 << 8 | b0);
  };
  for (size_t i = 0; i + 1 < in.size(); i += 2) {
    uint32_t u = unit(i);
    if (u >= 0xD800 && u <= 0xDBFF && i + 3 < in.size()) {
      uint32_t lo = unit(i + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        AppendUtf8(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00), &out);
        i += 2;
        continue;
      }
    }
    AppendUtf8((u >= 0xD800 && u <= 0xDFFF) ? 0xFFFD : u, &out);
  }
  return out;
}

}  // namespace

// Consumes tokenizer events into a RobotsTxt. Group rule: consecutive
// User-agent lines share a group; the first User-agent after a rule line
// starts a new one (Sitemap, Crawl-delay and unknown lines do not end a
// group's agent list, RFC 9309 2.2.4).
class RobotsTxtBuilder : public RobotsParseHandler {
 public:
  explicit RobotsTxtBuilder(RobotsTxt* out) : out_(out) {}

  void HandleUserAgent(int line, std::string_view value) override {
    if (out_->groups_.empty() || saw_rule_) {
      out_->groups_.emplace_back();
      saw_rule_ = false;
    }
    std::string agent = ExtractAgent(value);
    if (agent.empty()) {
      Anomaly(line, "user-agent without a product token");
      return;
    }
    auto& agents = out_->groups_.back().agents;
    if (std::find(agents.begin(), agents.end(), agent) == agents.end())
      agents.push_back(std::move(agent));
  }
  void HandleAllow(int line, std::string_view value) override {
    AddRule(line, true, value);
  }
  void HandleDisallow(int line, std::string_view value) override {
    AddRule(line, false, value);
  }
  void HandleSitemap(int line, std::string_view value) override {
    if (value.empty()) return Anomaly(line, "empty sitemap");
    auto& maps = out_->sitemaps_;
    if (std::find(maps.begin(), maps.end(), value) != maps.end()) return;
    if (maps.size() >= kMaxRobotsSitemaps)
      return Anomaly(line, "too many sitemaps");
    maps.emplace_back(value);
  }
  void HandleCrawlDelay(int line, std::string_view value) override {
    if (out_->groups_.empty())
      return Anomaly(line, "crawl-delay outside a group");
    double delay = 0;
    auto [end, ec] =
        std::from_chars(value.data(), value.data() + value.size(), delay);
    if (ec != std::errc() || !std::isfinite(delay) || delay < 0)
      return Anomaly(line, "invalid crawl-delay");
    if (end != value.data() + value.size())
      Anomaly(line, "trailing text after crawl-delay");
    out_->groups_.back().crawl_delay_s = std::min(delay, kMaxCrawlDelayS);
  }
  void HandleUnknownAction(int line, std::string_view key,
                           std::string_view value) override {
    // A bare URL line ("http://host/sitemap.xml") is read as a Sitemap, as
    // crawler-commons does.
    std::string k = AsciiLowerCopy(key);
    if ((k == "http" || k == "https") && value.starts_with("//")) {
      Anomaly(line, "sitemap URL without 'Sitemap:'");
      HandleSitemap(line, std::string(key) + ":" + std::string(value));
      return;
    }
    static constexpr std::string_view kKnown[] = {
        "host",          "clean-param", "request-rate",   "visit-time",
        "robot-version", "noindex",     "content-signal", "comment"};
    if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown))
      Anomaly(line, "unknown directive '" + k.substr(0, 40) + "'");
  }
  void ReportLineMetadata(int line, const RobotsLineMetadata& meta) override {
    if (meta.is_line_too_long) Anomaly(line, "line too long, cut");
    if (meta.is_missing_colon) Anomaly(line, "missing ':' separator");
    if (meta.is_acceptable_typo) Anomaly(line, "misspelled directive");
  }

 private:
  void AddRule(int line, bool allow, std::string_view value) {
    if (out_->groups_.empty()) return Anomaly(line, "rule outside any group");
    saw_rule_ = true;
    // An empty pattern matches nothing (RFC 9309 2.2.2: "Disallow:" allows
    // all); it still ends the group's agent list.
    if (value.empty()) return;
    auto& rules = out_->groups_.back().rules;
    AddPattern(&rules, allow, EscapePattern(value), line);
    // "Allow: /d/index.html" (or .htm) also allows "/d/" itself, which
    // serves that page (Google and crawler-commons do the same).
    size_t slash = value.rfind('/');
    if (allow && slash != std::string_view::npos &&
        value.substr(slash).starts_with("/index.htm")) {
      AddPattern(&rules, true, EscapePattern(value.substr(0, slash + 1)) + "$",
                 line);
    }
  }
  static void AddPattern(std::vector<RobotsRule>* rules, bool allow,
                         std::string pattern, int line) {
    std::string normalized = NormalizePatternEscapes(pattern);
    rules->push_back(
        RobotsRule{allow, std::move(pattern), line, std::move(normalized)});
  }
  void Anomaly(int line, std::string message) {
    if (out_->anomalies_.size() < kMaxRobotsAnomalies)
      out_->anomalies_.push_back(RobotsAnomaly{line, std::move(message)});
  }

  RobotsTxt* out_;  // not owned
  bool saw_rule_ = false;
};

RobotsTxt ParseRobotsTxt(std::string_view body) {
  RobotsTxt robots;
  RobotsTxtBuilder builder(&robots);
  if (body.size() > kMaxRobotsBytes) {
    // Keep whole lines only: a cut "Allow: /abc" would allow more.
    body = body.substr(0, kMaxRobotsBytes);
    size_t last_end = body.find_last_of("\r\n");
    body = body.substr(0, last_end == std::string_view::npos ? 0 : last_end);
    robots.truncated_ = true;
    robots.anomalies_.push_back({0, "robots.txt over 500 KiB, rest ignored"});
  }
  if (body.size() >= 2 &&
      (body.starts_with("\xFF\xFE") || body.starts_with("\xFE\xFF"))) {
    bool big_endian = body[0] == '\xFE';
    std::string utf8 = Utf16ToUtf8(body.substr(2), big_endian);
    TokenizeRobotsTxt(utf8, builder);
  } else {
    TokenizeRobotsTxt(body, builder);
  }
  return robots;
}

namespace {

// The groups that apply to `token`: all groups naming it or, if none does,
// all "*" groups (RFC 9309 2.2.1).
std::vector<const RobotsGroup*> ApplicableGroups(
    const std::vector<RobotsGroup>& groups, std::string_view product_token) {
  std::string token = AsciiLowerCopy(product_token);
  std::vector<const RobotsGroup*> specific, global;
  for (const RobotsGroup& g : groups) {
    for (const std::string& a : g.agents) {
      if (!token.empty() && a == token) {
        specific.push_back(&g);
        break;
      }
      if (a == "*") {
        global.push_back(&g);
        break;
      }
    }
  }
  // A group naming both "*" and the token counts as specific.
  if (!token.empty()) {
    for (const RobotsGroup* g : global) {
      if (std::find(g->agents.begin(), g->agents.end(), token) !=
          g->agents.end()) {
        specific.push_back(g);
      }
    }
  }
  return specific.empty() ? global : specific;
}

}  // namespace

bool RobotsTxt::IsAllowed(std::string_view product_token,
                          std::string_view path_and_query) const {
  return Decide(product_token, path_and_query, true);
}

bool RobotsTxt::Decide(std::string_view product_token,
                       std::string_view path_and_query, bool normalized) const {
  std::string_view path = path_and_query.empty() ? "/" : path_and_query;
  // RFC 9309 2.2.2: "The /robots.txt URI is implicitly allowed."
  if (path == "/robots.txt") return true;
  // Longest match wins; on equal length Allow wins (RFC 9309 2.2.2).
  long best_allow = -1, best_disallow = -1;
  for (const RobotsGroup* g : ApplicableGroups(groups_, product_token)) {
    for (const RobotsRule& r : g->rules) {
      const std::string& pattern = normalized ? r.normalized : r.pattern;
      long len = static_cast<long>(pattern.size());
      long& best = r.allow ? best_allow : best_disallow;
      if (len > best && PatternMatches(pattern, path)) best = len;
    }
  }
  return best_disallow <= best_allow;
}

bool RobotsTxt::IsUrlAllowed(std::string_view product_token,
                             std::string_view url) const {
  return Decide(product_token, RobotsPathOfUrl(url), false);
}

std::optional<double> RobotsTxt::CrawlDelay(
    std::string_view product_token) const {
  std::optional<double> delay;
  for (const RobotsGroup* g : ApplicableGroups(groups_, product_token)) {
    if (g->crawl_delay_s && (!delay || *g->crawl_delay_s > *delay))
      delay = g->crawl_delay_s;
  }
  return delay;
}

std::vector<std::string> RobotsTxt::ResolvedSitemaps(
    std::string_view robots_url) const {
  std::vector<std::string> out;
  for (const std::string& s : sitemaps_) {
    auto resolved = ResolveUrl(robots_url, s);
    if (resolved.ok() &&
        std::find(out.begin(), out.end(), *resolved) == out.end()) {
      out.push_back(std::move(*resolved));
    }
  }
  return out;
}

bool IsValidProductToken(std::string_view token) {
  if (token.empty()) return false;
  for (char c : token) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
              c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string RobotsPathOfUrl(std::string_view url) {
  // A leading "//" (network-path reference) is skipped; "://" marks the end
  // of the scheme only if no '/', '?' or ';' comes before it.
  size_t from = url.starts_with("//") ? 2 : 0;
  size_t early = url.find_first_of("/?;", from);
  size_t scheme_end = url.find("://", from);
  if (scheme_end == std::string_view::npos ||
      (early != std::string_view::npos && early < scheme_end)) {
    scheme_end = from;
  } else {
    scheme_end += 3;
  }
  size_t path_start = url.find_first_of("/?;", scheme_end);
  if (path_start == std::string_view::npos) return "/";
  size_t hash = url.find('#', from);
  if (hash != std::string_view::npos && hash < path_start) return "/";
  size_t path_end = hash == std::string_view::npos ? url.size() : hash;
  std::string path(url.substr(path_start, path_end - path_start));
  if (path[0] != '/') path.insert(path.begin(), '/');
  return path;
}

}  // namespace freshd::parse

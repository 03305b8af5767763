// The robots.txt tokenizer (see robots_parser.h). The line grammar follows
// RFC 9309 section 2.2 with google/robotstxt's tolerances.

#include "parse/robots_parser.h"

#include <array>

#include "base/ascii.h"
#include "parse/robots.h"

namespace freshd::parse {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (AsciiLower(s[i]) != prefix[i]) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

enum class Key {
  kUserAgent,
  kAllow,
  kDisallow,
  kSitemap,
  kCrawlDelay,
  kUnknown
};

// Recognizes a key by prefix, case-insensitively, as google/robotstxt does
// ("user-agent-foo" is a user-agent line). Typos seen in real files are
// accepted and flagged.
Key ClassifyKey(std::string_view key, bool* typo) {
  *typo = false;
  if (StartsWithIgnoreCase(key, "user-agent")) return Key::kUserAgent;
  for (std::string_view t : {"useragent", "user agent", "useg-agent"}) {
    if (StartsWithIgnoreCase(key, t)) {
      *typo = true;
      return Key::kUserAgent;
    }
  }
  if (StartsWithIgnoreCase(key, "allow")) return Key::kAllow;
  if (StartsWithIgnoreCase(key, "disallow")) return Key::kDisallow;
  // "desallow" is attested by crawler-commons; reading it as Disallow errs
  // on the side of politeness.
  for (std::string_view t : {"dissallow", "dissalow", "disalow", "diasllow",
                             "disallaw", "desallow"}) {
    if (StartsWithIgnoreCase(key, t)) {
      *typo = true;
      return Key::kDisallow;
    }
  }
  if (StartsWithIgnoreCase(key, "sitemap")) return Key::kSitemap;
  if (StartsWithIgnoreCase(key, "site-map")) {
    *typo = true;
    return Key::kSitemap;
  }
  if (StartsWithIgnoreCase(key, "crawl-delay")) return Key::kCrawlDelay;
  for (std::string_view t : {"crawldelay", "crawl delay", "crawl_delay"}) {
    if (StartsWithIgnoreCase(key, t)) {
      *typo = true;
      return Key::kCrawlDelay;
    }
  }
  return Key::kUnknown;
}

void ParseLine(int line_num, std::string_view line, bool too_long,
               RobotsParseHandler& handler) {
  RobotsLineMetadata meta;
  meta.is_line_too_long = too_long;
  size_t hash = line.find('#');
  if (hash != std::string_view::npos) {
    meta.has_comment = true;
    line = line.substr(0, hash);
  }
  line = Trim(line);
  if (line.empty()) {
    meta.is_empty = true;
    handler.ReportLineMetadata(line_num, meta);
    return;
  }
  std::string_view key, value;
  size_t sep = line.find(':');
  if (sep != std::string_view::npos) {
    key = Trim(line.substr(0, sep));
    value = Trim(line.substr(sep + 1));
  } else {
    // "key value" with exactly two blank-separated words (Google).
    size_t blank = line.find_first_of(" \t");
    if (blank == std::string_view::npos) {
      handler.ReportLineMetadata(line_num, meta);
      return;
    }
    key = line.substr(0, blank);
    value = Trim(line.substr(blank));
    if (value.find_first_of(" \t") != std::string_view::npos) {
      handler.ReportLineMetadata(line_num, meta);
      return;
    }
    meta.is_missing_colon = true;
  }
  if (key.empty()) {
    handler.ReportLineMetadata(line_num, meta);
    return;
  }
  meta.has_directive = true;
  bool typo = false;
  switch (ClassifyKey(key, &typo)) {
    case Key::kUserAgent:
      handler.HandleUserAgent(line_num, value);
      break;
    case Key::kAllow:
      handler.HandleAllow(line_num, value);
      break;
    case Key::kDisallow:
      handler.HandleDisallow(line_num, value);
      break;
    case Key::kSitemap:
      handler.HandleSitemap(line_num, value);
      break;
    case Key::kCrawlDelay:
      handler.HandleCrawlDelay(line_num, value);
      break;
    case Key::kUnknown:
      handler.HandleUnknownAction(line_num, key, value);
      break;
  }
  meta.is_acceptable_typo = typo;
  handler.ReportLineMetadata(line_num, meta);
}

}  // namespace

void TokenizeRobotsTxt(std::string_view body, RobotsParseHandler& handler) {
  // Skip a UTF-8 BOM, or as much of one as is there (Google does too).
  static constexpr std::array<char, 3> kBom = {'\xEF', '\xBB', '\xBF'};
  for (char b : kBom) {
    if (body.empty() || body.front() != b) break;
    body.remove_prefix(1);
  }
  handler.HandleRobotsStart();
  int line_num = 0;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = body.substr(pos, end - pos);
    bool too_long = line.size() > kMaxRobotsLineBytes;
    if (too_long) line = line.substr(0, kMaxRobotsLineBytes);
    ParseLine(++line_num, line, too_long, handler);
    // "\r\n" is one line end; a lone '\r' or '\n' is one too.
    pos = end + 1;
    if (end + 1 < body.size() && body[end] == '\r' && body[end + 1] == '\n')
      ++pos;
  }
  handler.HandleRobotsEnd();
}

}  // namespace freshd::parse

// The robots.txt tokenizer: turns any bytes into a sequence of directive
// events, tolerating typos, missing colons, BOMs and mixed line ends (see
// robots.h for the rules). RobotsTxt is one consumer; tests and diagnostics
// are others. Stateless; thread-safe.

#ifndef FRESHD_PARSE_ROBOTS_PARSER_H_
#define FRESHD_PARSE_ROBOTS_PARSER_H_

#include <string_view>

namespace freshd::parse {

// What the tokenizer noticed about one line.
struct RobotsLineMetadata {
  bool is_empty = false;  // blank or comment-only
  bool has_comment = false;
  bool is_acceptable_typo = false;  // e.g. "useragent", "dissallow"
  bool is_missing_colon = false;    // "Disallow /x"
  bool is_line_too_long = false;    // cut at kMaxRobotsLineBytes
  bool has_directive = false;       // a key:value pair was found
};

// Receives events in file order. Views are valid only during the call.
// Values are trimmed; keys are recognized case-insensitively.
class RobotsParseHandler {
 public:
  virtual ~RobotsParseHandler() = default;
  virtual void HandleRobotsStart() {}
  virtual void HandleRobotsEnd() {}
  virtual void HandleUserAgent(int line, std::string_view value) = 0;
  virtual void HandleAllow(int line, std::string_view value) = 0;
  virtual void HandleDisallow(int line, std::string_view value) = 0;
  virtual void HandleSitemap(int line, std::string_view value) = 0;
  virtual void HandleCrawlDelay(int /*line*/, std::string_view /*value*/) {}
  // Any other "key: value" line (Host, Request-rate, Clean-param, ...).
  virtual void HandleUnknownAction(int /*line*/, std::string_view /*key*/,
                                   std::string_view /*value*/) {}
  // Called once per line, after the line's directive event if any.
  virtual void ReportLineMetadata(int /*line*/,
                                  const RobotsLineMetadata& /*meta*/) {}
};

// Tokenizes `body` (already cut to the size limit and transcoded to UTF-8
// by the caller if needed; a leading full or partial UTF-8 BOM is skipped
// here). Lines are numbered from 1; "\r\n" counts as one line end.
void TokenizeRobotsTxt(std::string_view body, RobotsParseHandler& handler);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_ROBOTS_PARSER_H_

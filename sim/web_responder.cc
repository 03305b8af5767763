#include "sim/web_responder.h"

#include <cmath>
#include <ctime>

#include "base/iso8601.h"

namespace freshd::sim {
namespace {

std::string FormatTime(double unix_seconds, const char* format) {
  std::time_t t = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

}  // namespace

std::string HttpDate(double unix_seconds) {
  return FormatTime(unix_seconds, "%a, %d %b %Y %H:%M:%S GMT");
}

std::string IsoDate(double unix_seconds) {
  return FormatIso8601Utc(static_cast<int64_t>(std::floor(unix_seconds)));
}

bool EtagMatches(std::string_view header, const std::string& etag) {
  if (header == "*") return true;
  size_t pos = 0;
  while (pos < header.size()) {
    size_t comma = header.find(',', pos);
    if (comma == std::string_view::npos) comma = header.size();
    std::string_view item = header.substr(pos, comma - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.substr(0, 2) == "W/") item.remove_prefix(2);
    if (item == etag) return true;
    pos = comma + 1;
  }
  return false;
}

WebResponse TextResponse(int status, std::string body) {
  WebResponse r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  r.body = std::move(body);
  return r;
}

}  // namespace freshd::sim

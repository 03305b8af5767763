#include "parse/http_date.h"

#include <curl/curl.h>

#include <string>

namespace freshd::parse {

std::optional<double> ParseHttpDate(std::string_view value) {
  // curl_getdate wants a C string; a header value is short (capped by the
  // fetcher's header limit).
  if (value.empty() || value.size() > 256) return std::nullopt;
  const time_t t = curl_getdate(std::string(value).c_str(), nullptr);
  if (t == -1) return std::nullopt;
  return static_cast<double>(t);
}

}  // namespace freshd::parse

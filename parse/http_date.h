// HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, and the obsolete RFC 850 and
// asctime forms a recipient must accept) to Unix seconds. The one parser of
// Last-Modified, Retry-After and Date values in freshd; libcurl's
// curl_getdate does the work (it accepts all three forms and more, bounded
// in time), so nothing here is hand-written.
// Thread-safety: a pure function; safe from any thread.

#ifndef FRESHD_PARSE_HTTP_DATE_H_
#define FRESHD_PARSE_HTTP_DATE_H_

#include <optional>
#include <string_view>

namespace freshd::parse {

// Unix seconds, or nullopt for an empty or unparseable value.
std::optional<double> ParseHttpDate(std::string_view value);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_HTTP_DATE_H_

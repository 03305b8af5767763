// Unix seconds as an ISO 8601 / RFC 3339 UTC date-time, "2017-01-05T12:34:50Z":
// the one formatter for the change feed, WARC-Date, sitemap lastmods and the
// test web. Proleptic Gregorian calendar, any year (years before 1 or after
// 9999 print with more or fewer digits; callers that must stay within
// 0000-9999, like WARC-Date, clamp first). Pure.

#ifndef FRESHD_BASE_ISO8601_H_
#define FRESHD_BASE_ISO8601_H_

#include <cstdint>
#include <string>

namespace freshd {

// "2017-01-05T12:34:50Z" for 1483619690; "1969-12-31T23:59:59Z" for -1.
std::string FormatIso8601Utc(int64_t unix_seconds);

}  // namespace freshd

#endif  // FRESHD_BASE_ISO8601_H_

// Date parsing for sitemaps and feeds: W3C Datetime (the ISO 8601 profile
// of https://www.w3.org/TR/NOTE-datetime used by <lastmod> and Atom
// <updated>) and RFC 822 / RFC 1123 dates (RSS <pubDate>), both to UTC
// seconds since the Unix epoch; plus the ISO-8601 UTC formatter used in
// freshd's output. Pure functions; thread-safe.

#ifndef FRESHD_PARSE_W3C_DATETIME_H_
#define FRESHD_PARSE_W3C_DATETIME_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace freshd::parse {

// Accepts YYYY, YYYY-MM, YYYY-MM-DD, and YYYY-MM-DDThh:mm[:ss[.s+]]TZD with
// TZD = "Z" | "+hh:mm" | "-hh:mm" (also "+hhmm"; a missing TZD is read as
// UTC; ' ' accepted for 'T'). Missing month/day are 1; date-only values are
// midnight UTC; fractions are truncated. Surrounding whitespace is ignored.
// Returns nullopt for anything else or an impossible date (2014-02-30,
// 25:00, year outside 1..9999).
std::optional<int64_t> ParseW3cDatetime(std::string_view text);

// Accepts "[Day, ]DD Mon YY[YY] hh:mm[:ss] ZONE" where ZONE is +hhmm/-hhmm,
// UT, UTC, GMT, Z or EST/EDT/CST/CDT/MST/MDT/PST/PDT; two-digit years are
// 19xx if >= 50 else 20xx. A missing zone or a military letter other than Z
// (unreliable, RFC 2822 4.3) gives nullopt: the instant would be ambiguous.
// Month and day names are case-insensitive.
std::optional<int64_t> ParseRfc822Date(std::string_view text);

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_W3C_DATETIME_H_

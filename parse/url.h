// URL resolution and normalization for crawling (RFC 3986 with the WHATWG
// URL Standard's leniency for links found in web pages), and the 64-bit URL
// key under which store/ files a page.
//
// A normalized URL has the exact form  scheme "://" host [":" port] path
// ["?" query]: scheme is "http" or "https"; the host is lowercase ASCII
// (IDN labels converted to punycode with libidn2, UTS#46 non-transitional;
// IPv6 literals in brackets); the port is absent when it is the scheme's
// default; the path starts with "/" and has no dot segments; percent-escapes
// use uppercase hex, escapes of unreserved characters are decoded and bytes
// that may not appear raw (space, controls, non-ASCII, '"<>\^`{|}') are
// escaped; no userinfo, no fragment; at most kMaxUrlLength bytes.
// Normalizing a normalized URL returns it unchanged.
// All functions are pure and thread-safe.

#ifndef FRESHD_PARSE_URL_H_
#define FRESHD_PARSE_URL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace freshd::parse {

// Longest URL accepted, before and after normalization.
inline constexpr size_t kMaxUrlLength = 8192;

// Seed of UrlKey's XXH3-64. Never change it: keys are stored on disk.
inline constexpr uint64_t kUrlKeySeed = 0x66726573686475ULL;  // "freshdu"

// Normalizes an absolute http(s) URL as described above. Leading and
// trailing whitespace/controls are stripped and tab/CR/LF removed (as
// browsers do); '\' counts as '/' in the path.
// A stray '%' not followed by two hex digits is escaped as %25, not an error.
// On failure returns InvalidArgument whose message gives the reason, e.g.
// "empty URL", "URL too long", "not an absolute URL", "unsupported scheme
// 'ftp'", "empty host", "invalid host", "invalid port", "userinfo not
// allowed", "invalid IDN host".
Result<std::string> NormalizeUrl(std::string_view url);

// Resolves `ref` (absolute or relative, e.g. an href) against `base`
// (RFC 3986 section 5.2) and normalizes the result. `base` must be an
// absolute http(s) URL (it need not be normalized). Errors as NormalizeUrl,
// plus "invalid base: <reason>". An empty `ref` yields `base` without its
// fragment.
Result<std::string> ResolveUrl(std::string_view base, std::string_view ref);

// Stable 64-bit key of a normalized URL: XXH3_64bits_withSeed(url,
// kUrlKeySeed). Same value on every platform and version.
uint64_t UrlKey(std::string_view normalized_url);

// Accessors on a normalized URL; the result views into the argument.
// REQUIRES: `normalized_url` came from NormalizeUrl or ResolveUrl (otherwise
// the result is unspecified but memory-safe).
//   UrlScheme("https://a.b:8443/x?y")       -> "https"
//   UrlAuthority("https://a.b:8443/x?y")    -> "a.b:8443"  (host[:port])
//   UrlHost("https://a.b:8443/x?y")         -> "a.b"       ([v6] kept)
//   UrlPathAndQuery("https://a.b:8443/x?y") -> "/x?y"      (robots matching)
std::string_view UrlScheme(std::string_view normalized_url);
std::string_view UrlAuthority(std::string_view normalized_url);
std::string_view UrlHost(std::string_view normalized_url);
std::string_view UrlPathAndQuery(std::string_view normalized_url);

// The origin "scheme://authority" of a normalized URL, e.g. the prefix to
// which "/robots.txt" is appended.
std::string UrlOrigin(std::string_view normalized_url);

// The value of `name` in a query string or form body
// (application/x-www-form-urlencoded: '+' is a space, %XX a byte), the
// first one; "" when it has no '='; nullopt when absent.
std::optional<std::string> FormValue(std::string_view query,
                                     std::string_view name);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_URL_H_

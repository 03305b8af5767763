// Character encoding of an HTML page and conversion to UTF-8, following the
// WHATWG HTML encoding sniffing order (HTML §13.2.3.2, simplified): a BOM,
// then the Content-Type charset parameter, then a <meta charset> or
// <meta http-equiv=content-type> in the first kPrescanBytes, then UTF-8 if
// the bytes are valid UTF-8, else windows-1252. Labels map as in the WHATWG
// Encoding Standard (iso-8859-1 and us-ascii mean windows-1252; shift_jis
// means CP932; gb2312 means GBK). windows-1252 and UTF-8 are decoded here;
// every other encoding through glibc iconv. Undecodable bytes -> U+FFFD.
// Thread-safety: pure functions (iconv handles are per call).

#ifndef FRESHD_PARSE_CHARSET_H_
#define FRESHD_PARSE_CHARSET_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace freshd::parse {

inline constexpr size_t kPrescanBytes = 4096;

struct Charset {
  std::string name;      // canonical lowercase name, e.g. "utf-8", "shift_jis"
  std::string iconv;     // iconv name, empty for utf-8 and windows-1252
  size_t bom_bytes = 0;  // bytes of byte-order mark to skip
};

// Maps an encoding label (case-insensitive, surrounding whitespace and
// quotes ignored) to a Charset; returns false for unknown labels.
bool LookupCharset(std::string_view label, Charset* out);

// The charset parameter of a Content-Type value, or "" if none.
std::string_view CharsetParam(std::string_view content_type);

// Decides the encoding of `body` by the sniffing order above. Never fails.
Charset SniffCharset(std::string_view body, std::string_view content_type);

// Decodes `body` (after the BOM) from `charset` to UTF-8, invalid sequences
// becoming U+FFFD. If iconv cannot open the encoding, decodes as
// windows-1252 and sets *fallback (if non-null). The output is valid UTF-8.
std::string DecodeToUtf8(std::string_view body, const Charset& charset,
                         bool* fallback = nullptr);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_CHARSET_H_

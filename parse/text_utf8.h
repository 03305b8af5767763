// Small UTF-8 helpers shared by the HTML extractor and the word tokenizer:
// decode one code point and validate a buffer (from base/utf8.h), append one
// code point, and scrub a buffer. Invalid sequences (overlong forms,
// surrogates, > U+10FFFF, truncation) are reported as kInvalidCodePoint and
// consume exactly one byte, as the WHATWG decoder's replacement behaviour
// does per maximal subpart (close enough for scrubbing).
// Thread-safety: pure functions.

#ifndef FRESHD_PARSE_TEXT_UTF8_H_
#define FRESHD_PARSE_TEXT_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "base/utf8.h"

namespace freshd::parse {

inline constexpr char32_t kReplacementChar = 0xFFFD;
using freshd::DecodeUtf8;         // base/utf8.h
using freshd::kInvalidCodePoint;  // base/utf8.h
using freshd::ValidUtf8Prefix;    // base/utf8.h

// Appends the UTF-8 form of `cp`; invalid code points append U+FFFD.
inline void AppendUtf8(char32_t cp, std::string* out) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacementChar;
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Copy of `s` with each invalid byte replaced by U+FFFD.
std::string ScrubUtf8(std::string_view s);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_TEXT_UTF8_H_

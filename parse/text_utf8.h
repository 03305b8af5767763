// Small UTF-8 helpers shared by the HTML extractor and the word tokenizer:
// decode one code point, append one, and validate/scrub a buffer. Invalid
// sequences (overlong forms, surrogates, > U+10FFFF, truncation) are reported
// as kInvalidCodePoint and consume exactly one byte, as the WHATWG decoder's
// replacement behaviour does per maximal subpart (close enough for scrubbing).
// Thread-safety: pure functions.

#ifndef FRESHD_PARSE_TEXT_UTF8_H_
#define FRESHD_PARSE_TEXT_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace freshd::parse {

inline constexpr char32_t kInvalidCodePoint = 0xFFFFFFFF;
inline constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes the code point at s[*pos] and advances *pos past it (by one byte
// if invalid, returning kInvalidCodePoint). REQUIRES: *pos < s.size().
inline char32_t DecodeUtf8(std::string_view s, size_t* pos) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = *pos, n = s.size();
  unsigned char c = p[i];
  if (c < 0x80) {
    *pos = i + 1;
    return c;
  }
  int len;
  char32_t cp, min;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    *pos = i + 1;
    return kInvalidCodePoint;
  }
  if (i + len > n) {
    *pos = i + 1;
    return kInvalidCodePoint;
  }
  for (int k = 1; k < len; ++k) {
    unsigned char cc = p[i + k];
    if ((cc & 0xC0) != 0x80) {
      *pos = i + 1;
      return kInvalidCodePoint;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    *pos = i + 1;
    return kInvalidCodePoint;
  }
  *pos = i + len;
  return cp;
}

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

// Length of the longest valid UTF-8 prefix of `s` (== s.size() if valid).
size_t ValidUtf8Prefix(std::string_view s);

// Copy of `s` with each invalid byte replaced by U+FFFD.
std::string ScrubUtf8(std::string_view s);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_TEXT_UTF8_H_

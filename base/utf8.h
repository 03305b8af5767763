// UTF-8 validation, shared by the TOML loaders (conf/toml_text.h) and the
// HTML extractor and tokenizer (parse/text_utf8.h): decode one code point,
// and find the longest valid prefix of a buffer. Invalid sequences (overlong
// forms, surrogates, > U+10FFFF, truncation) are reported as
// kInvalidCodePoint and consume exactly one byte. Pure functions.

#ifndef FRESHD_BASE_UTF8_H_
#define FRESHD_BASE_UTF8_H_

#include <cstddef>
#include <string_view>

namespace freshd {

inline constexpr char32_t kInvalidCodePoint = 0xFFFFFFFF;

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

// Length of the longest valid UTF-8 prefix of `s` (== s.size() if valid).
size_t ValidUtf8Prefix(std::string_view s);

}  // namespace freshd

#endif  // FRESHD_BASE_UTF8_H_

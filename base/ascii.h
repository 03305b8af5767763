// ASCII case mapping and character classes, as the web's protocols define
// them (URL schemes and hosts, HTML tag and attribute names, HTTP header
// names, robots.txt user agents and directives, dates' month and zone
// names): never locale-dependent, and bytes >= 0x80 are left as they are.
// Header-only pure functions.

#ifndef FRESHD_BASE_ASCII_H_
#define FRESHD_BASE_ASCII_H_

#include <string>
#include <string_view>

namespace freshd {

constexpr char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c;
}

constexpr bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

constexpr bool IsAsciiAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The value of a hexadecimal digit (0-9, a-f, A-F), or -1 (a
// percent-encoding's digits).
constexpr int AsciiHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr bool IsAsciiBlank(char c) { return c == ' ' || c == '\t'; }

// `s` without leading and trailing spaces and tabs (HTTP's OWS, a CSV
// field's or a config value's padding).
constexpr std::string_view TrimAsciiBlanks(std::string_view s) {
  while (!s.empty() && IsAsciiBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiBlank(s.back())) s.remove_suffix(1);
  return s;
}

// `s` with A-Z mapped to a-z.
inline std::string AsciiLowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

// Whether `raw` equals `lower`, ignoring ASCII case in `raw`.
// REQUIRES: `lower` has no A-Z.
constexpr bool EqualsAsciiLower(std::string_view raw, std::string_view lower) {
  if (raw.size() != lower.size()) return false;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (AsciiLower(raw[i]) != lower[i]) return false;
  }
  return true;
}

// Whether `a` equals `b`, ignoring ASCII case in both (host names).
constexpr bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

}  // namespace freshd

#endif  // FRESHD_BASE_ASCII_H_

// Small ASCII text helpers for HTTP header handling inside fetch/:
// whitespace trimming (header names and values are ASCII per RFC 9110;
// other bytes pass through unchanged). Case mapping is base/ascii.h's.
// Thread-safety: pure functions.

#ifndef FRESHD_FETCH_HTTP_TEXT_H_
#define FRESHD_FETCH_HTTP_TEXT_H_

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "base/ascii.h"

namespace freshd::fetch {

inline std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

inline bool AllDigits(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_HTTP_TEXT_H_

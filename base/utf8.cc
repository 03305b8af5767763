#include "base/utf8.h"

#include <cstdint>
#include <cstring>

namespace freshd {

size_t ValidUtf8Prefix(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (w & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t at = i;
    if (DecodeUtf8(s, &i) == kInvalidCodePoint) return at;
  }
  return n;
}

}  // namespace freshd

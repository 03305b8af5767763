#include "parse/text_utf8.h"

namespace freshd::parse {

std::string ScrubUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  size_t i = 0;
  while (i < s.size()) {
    size_t ok = ValidUtf8Prefix(s.substr(i));
    out.append(s.data() + i, ok);
    i += ok;
    if (i < s.size()) {
      AppendUtf8(kReplacementChar, &out);
      ++i;
    }
  }
  return out;
}

}  // namespace freshd::parse

#include "parse/html_entities.h"

#include <algorithm>
#include <cstring>

#include "parse/text_utf8.h"

namespace freshd::parse {
namespace {

using internal::kNamedEntities;
using internal::kNumNamedEntities;
using internal::NamedEntity;

constexpr size_t kMaxNameLength = 32;  // longest name in the table is 8

// windows-1252 meanings of numeric references 0x80..0x9F (0 = keep).
constexpr char16_t kC1[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,      0x017D, 0,
    0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

bool IsAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z');
}

const NamedEntity* Find(std::string_view name) {
  const NamedEntity* end = kNamedEntities + kNumNamedEntities;
  const NamedEntity* it = std::lower_bound(
      kNamedEntities, end, name, [](const NamedEntity& e, std::string_view n) {
        return std::string_view(e.name) < n;
      });
  return (it != end && std::string_view(it->name) == name) ? it : nullptr;
}

size_t DecodeNumeric(std::string_view s, size_t amp, std::string* out) {
  size_t i = amp + 2;  // past "&#"
  bool hex = i < s.size() && (s[i] == 'x' || s[i] == 'X');
  if (hex) ++i;
  size_t digits_start = i;
  uint32_t value = 0;
  bool overflow = false;
  while (i < s.size()) {
    char c = s[i];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (hex && c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (hex && c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      break;
    }
    value = value * (hex ? 16 : 10) + d;
    if (value > 0x10FFFF) overflow = true, value = 0x110000;
    ++i;
  }
  if (i == digits_start) return 0;  // "&#" or "&#x" alone stays literal
  if (i < s.size() && s[i] == ';') ++i;
  char32_t cp = value;
  if (overflow || cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) {
    cp = kReplacementChar;
  } else if (cp >= 0x80 && cp <= 0x9F && kC1[cp - 0x80]) {
    cp = kC1[cp - 0x80];
  }
  AppendUtf8(cp, out);
  return i - amp;
}

}  // namespace

size_t DecodeCharRef(std::string_view s, size_t amp, bool in_attribute,
                     std::string* out) {
  if (amp + 1 >= s.size()) return 0;
  if (s[amp + 1] == '#') return DecodeNumeric(s, amp, out);
  size_t start = amp + 1, i = start;
  while (i < s.size() && i - start < kMaxNameLength && IsAlnum(s[i])) ++i;
  if (i == start) return 0;
  std::string_view run = s.substr(start, i - start);
  if (i < s.size() && s[i] == ';') {
    if (const NamedEntity* e = Find(run)) {
      AppendUtf8(e->code_point, out);
      return i + 1 - amp;
    }
  }
  // Without ';': the longest legacy name that prefixes the run.
  for (size_t len = std::min<size_t>(run.size(), 6); len >= 2; --len) {
    const NamedEntity* e = Find(run.substr(0, len));
    if (!e || !e->legacy) continue;
    size_t after = start + len;
    if (in_attribute && after < s.size() &&
        (IsAlnum(s[after]) || s[after] == '='))
      return 0;
    AppendUtf8(e->code_point, out);
    return after - amp;
  }
  return 0;
}

void AppendDecoded(std::string_view raw, bool in_attribute, std::string* out) {
  size_t i = 0;
  while (i < raw.size()) {
    const void* hit = std::memchr(raw.data() + i, '&', raw.size() - i);
    size_t amp = hit ? static_cast<const char*>(hit) - raw.data() : raw.size();
    out->append(raw.data() + i, amp - i);
    if (amp >= raw.size()) break;
    size_t used = DecodeCharRef(raw, amp, in_attribute, out);
    if (used == 0) {
      out->push_back('&');
      used = 1;
    }
    i = amp + used;
  }
}

}  // namespace freshd::parse

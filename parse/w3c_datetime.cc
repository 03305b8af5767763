// W3C Datetime and RFC 822 date parsing (see w3c_datetime.h). Calendar
// arithmetic after Howard Hinnant's days_from_civil/civil_from_days.

#include "parse/w3c_datetime.h"

#include <array>
#include <cstdio>

#include "base/ascii.h"

namespace freshd::parse {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
         c == '\v';
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Reads exactly `n` digits at `*pos`.
bool ReadDigits(std::string_view s, size_t* pos, int n, int* out) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (!IsAsciiDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr std::array<unsigned, 12> kDays = {31, 28, 31, 30, 31, 30,
                                                     31, 31, 30, 31, 30, 31};
  return (m == 2 && IsLeap(y)) ? 29 : kDays[m - 1];
}

bool ValidDate(int64_t y, int m, int d) {
  return y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 &&
         static_cast<unsigned>(d) <= DaysInMonth(y, static_cast<unsigned>(m));
}

std::optional<int64_t> Instant(int64_t y, int mo, int d, int h, int mi, int s,
                               int offset_s) {
  if (!ValidDate(y, mo, d) || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 ||
      s > 60) {
    return std::nullopt;
  }
  return DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) *
             86400 +
         h * 3600 + mi * 60 + s - offset_s;
}

// "Z", "+hh:mm", "-hh:mm", "+hhmm", "+hh" at s[pos..]; must consume all.
bool ReadOffset(std::string_view s, size_t pos, int* offset_s) {
  if (pos == s.size()) {
    *offset_s = 0;  // no zone: read as UTC
    return true;
  }
  if ((s[pos] == 'Z' || s[pos] == 'z') && pos + 1 == s.size()) {
    *offset_s = 0;
    return true;
  }
  if (s[pos] != '+' && s[pos] != '-') return false;
  int sign = s[pos] == '-' ? -1 : 1;
  ++pos;
  int hh = 0, mm = 0;
  if (!ReadDigits(s, &pos, 2, &hh)) return false;
  if (pos < s.size() && s[pos] == ':') ++pos;
  if (pos < s.size() && !ReadDigits(s, &pos, 2, &mm)) return false;
  if (pos != s.size() || hh > 23 || mm > 59) return false;
  *offset_s = sign * (hh * 3600 + mm * 60);
  return true;
}

}  // namespace

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::optional<int64_t> ParseW3cDatetime(std::string_view text) {
  std::string_view s = TrimSpace(text);
  size_t pos = 0;
  int y = 0, mo = 1, d = 1, h = 0, mi = 0, sec = 0;
  if (!ReadDigits(s, &pos, 4, &y)) return std::nullopt;
  if (pos == s.size()) return Instant(y, 1, 1, 0, 0, 0, 0);
  if (s[pos++] != '-' || !ReadDigits(s, &pos, 2, &mo)) return std::nullopt;
  if (pos == s.size()) return Instant(y, mo, 1, 0, 0, 0, 0);
  if (s[pos++] != '-' || !ReadDigits(s, &pos, 2, &d)) return std::nullopt;
  if (pos == s.size()) return Instant(y, mo, d, 0, 0, 0, 0);
  if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return std::nullopt;
  ++pos;
  if (!ReadDigits(s, &pos, 2, &h) || pos >= s.size() || s[pos++] != ':' ||
      !ReadDigits(s, &pos, 2, &mi)) {
    return std::nullopt;
  }
  if (pos < s.size() && s[pos] == ':') {
    ++pos;
    if (!ReadDigits(s, &pos, 2, &sec)) return std::nullopt;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
      ++pos;
      size_t start = pos;
      while (pos < s.size() && IsAsciiDigit(s[pos])) ++pos;
      if (pos == start) return std::nullopt;  // fractions are truncated
    }
  }
  int offset = 0;
  if (!ReadOffset(s, pos, &offset)) return std::nullopt;
  return Instant(y, mo, d, h, mi, sec, offset);
}

std::optional<int64_t> ParseRfc822Date(std::string_view text) {
  std::string_view s = TrimSpace(text);
  // Split into blank-separated tokens (at most 7 matter).
  std::array<std::string_view, 8> tok;
  size_t n = 0;
  size_t pos = 0;
  while (pos < s.size() && n < tok.size()) {
    while (pos < s.size() && IsSpace(s[pos])) ++pos;
    size_t start = pos;
    while (pos < s.size() && !IsSpace(s[pos])) ++pos;
    if (pos > start) tok[n++] = s.substr(start, pos - start);
  }
  if (pos < s.size()) return std::nullopt;  // trailing garbage
  size_t i = 0;
  // Optional "Thu," (or "Thu" followed by a comma-less date).
  if (n > 0 && !tok[0].empty() && !IsAsciiDigit(tok[0][0])) ++i;
  if (n - i != 5) return std::nullopt;
  auto number = [](std::string_view t, int max_digits, int* out) {
    if (t.empty() || t.size() > static_cast<size_t>(max_digits)) return false;
    int v = 0;
    for (char c : t) {
      if (!IsAsciiDigit(c)) return false;
      v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
  };
  int day = 0, year = 0;
  if (!number(tok[i], 2, &day)) return std::nullopt;
  static constexpr std::array<std::string_view, 12> kMonths = {
      "jan", "feb", "mar", "apr", "may", "jun",
      "jul", "aug", "sep", "oct", "nov", "dec"};
  std::string_view mon = tok[i + 1];
  if (mon.size() < 3) return std::nullopt;
  int month = 0;
  for (size_t m = 0; m < kMonths.size(); ++m) {
    if (AsciiLower(mon[0]) == kMonths[m][0] &&
        AsciiLower(mon[1]) == kMonths[m][1] &&
        AsciiLower(mon[2]) == kMonths[m][2]) {
      month = static_cast<int>(m) + 1;
    }
  }
  if (month == 0) return std::nullopt;
  std::string_view ytok = tok[i + 2];
  if (ytok.size() == 2) {
    if (!number(ytok, 2, &year)) return std::nullopt;
    year += year >= 50 ? 1900 : 2000;
  } else if (ytok.size() == 4) {
    if (!number(ytok, 4, &year)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  std::string_view t = tok[i + 3];
  size_t p = 0;
  int h = 0, mi = 0, sec = 0;
  if (!ReadDigits(t, &p, 2, &h) || p >= t.size() || t[p++] != ':' ||
      !ReadDigits(t, &p, 2, &mi)) {
    return std::nullopt;
  }
  if (p < t.size()) {
    if (t[p++] != ':' || !ReadDigits(t, &p, 2, &sec) || p != t.size())
      return std::nullopt;
  }
  std::string_view zone = tok[i + 4];
  int offset = 0;
  if (zone[0] == '+' || zone[0] == '-') {
    int hh = 0, mm = 0;
    size_t zp = 1;
    if (zone.size() != 5 || !ReadDigits(zone, &zp, 2, &hh) ||
        !ReadDigits(zone, &zp, 2, &mm) || mm > 59) {
      return std::nullopt;
    }
    offset = (zone[0] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
  } else {
    struct Named {
      std::string_view name;
      int hours;
    };
    static constexpr std::array<Named, 12> kZones = {{{"gmt", 0},
                                                      {"ut", 0},
                                                      {"utc", 0},
                                                      {"z", 0},
                                                      {"est", -5},
                                                      {"edt", -4},
                                                      {"cst", -6},
                                                      {"cdt", -5},
                                                      {"mst", -7},
                                                      {"mdt", -6},
                                                      {"pst", -8},
                                                      {"pdt", -7}}};
    std::string lower;
    for (char c : zone) lower.push_back(AsciiLower(c));
    bool found = false;
    for (const Named& z : kZones) {
      if (z.name == lower) {
        offset = z.hours * 3600;
        found = true;
      }
    }
    if (!found) return std::nullopt;
  }
  return Instant(year, month, day, h, mi, sec, offset);
}

}  // namespace freshd::parse

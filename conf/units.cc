#include "conf/units.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/ascii.h"

namespace freshd {
namespace {

constexpr uint64_t kMaxSize = uint64_t{1} << 62;

struct Unit {
  const char* name;
  double factor;
};

// Longest names first so "ms" is not read as "m" + "s".
constexpr Unit kDurationUnits[] = {
    {"ms", 1e-3},  {"us", 1e-6},   {"s", 1.0},         {"m", 60.0},
    {"h", 3600.0}, {"d", 86400.0}, {"w", 7 * 86400.0},
};

constexpr Unit kSizeUnits[] = {
    {"KiB", 1024.0},       {"MiB", 1048576.0},
    {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {"kB", 1e3},           {"KB", 1e3},
    {"MB", 1e6},           {"GB", 1e9},
    {"TB", 1e12},          {"B", 1.0},
};

// Reads a non-negative decimal number at the front of `s`; advances `s`.
bool ReadNumber(std::string_view* s, double* out) {
  size_t i = 0;
  bool digits = false, dot = false;
  while (i < s->size()) {
    char c = (*s)[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
    ++i;
  }
  if (!digits || i > 40) return false;
  *out = std::strtod(std::string(s->substr(0, i)).c_str(), nullptr);
  s->remove_prefix(i);
  return std::isfinite(*out);
}

template <size_t N>
const Unit* ReadUnit(std::string_view* s, const Unit (&units)[N]) {
  for (const Unit& u : units) {
    std::string_view name(u.name);
    if (s->substr(0, name.size()) == name) {
      s->remove_prefix(name.size());
      return &u;
    }
  }
  return nullptr;
}

}  // namespace

Result<double> ParseDuration(std::string_view text) {
  std::string_view s = TrimAsciiBlanks(text);
  const std::string quoted = "\"" + std::string(text) + "\"";
  if (s.empty()) return Status::InvalidArgument("empty duration");
  if (s.front() == '-') {
    return Status::InvalidArgument("negative duration " + quoted);
  }
  double total = 0;
  bool bare_allowed = true;
  while (!s.empty()) {
    double number;
    if (!ReadNumber(&s, &number)) {
      return Status::InvalidArgument("cannot read duration " + quoted +
                                     " (use e.g. 500ms, 5s, 2h, 7d)");
    }
    if (s.empty() && bare_allowed) return number;  // plain seconds
    const Unit* unit = ReadUnit(&s, kDurationUnits);
    if (unit == nullptr) {
      return Status::InvalidArgument("unknown unit in duration " + quoted +
                                     " (use ms, s, m, h, d, w)");
    }
    total += number * unit->factor;
    bare_allowed = false;
  }
  if (!std::isfinite(total) || total > 1e12) {
    return Status::InvalidArgument("duration out of range " + quoted);
  }
  return total;
}

Result<uint64_t> ParseSize(std::string_view text) {
  std::string_view s = TrimAsciiBlanks(text);
  const std::string quoted = "\"" + std::string(text) + "\"";
  if (s.empty()) return Status::InvalidArgument("empty size");
  if (s.front() == '-')
    return Status::InvalidArgument("negative size " + quoted);
  double number;
  if (!ReadNumber(&s, &number)) {
    return Status::InvalidArgument("cannot read size " + quoted +
                                   " (use e.g. 512, 64KiB, 10MiB, 1GiB)");
  }
  s = TrimAsciiBlanks(s);
  double factor = 1.0;
  if (!s.empty()) {
    const Unit* unit = ReadUnit(&s, kSizeUnits);
    if (unit == nullptr || !s.empty()) {
      return Status::InvalidArgument("unknown unit in size " + quoted +
                                     " (use B, KiB, MiB, GiB, kB, MB, GB)");
    }
    factor = unit->factor;
  }
  double bytes = number * factor;
  if (bytes > static_cast<double>(kMaxSize)) {
    return Status::InvalidArgument("size out of range " + quoted);
  }
  if (bytes != std::floor(bytes)) {
    return Status::InvalidArgument("size is not a whole number of bytes " +
                                   quoted);
  }
  return static_cast<uint64_t>(bytes);
}

std::string FormatDuration(double seconds) {
  if (seconds == 0) return "0s";
  struct {
    const char* name;
    double factor;
  } units[] = {{"w", 7 * 86400.0}, {"d", 86400.0}, {"h", 3600.0}, {"m", 60.0},
               {"s", 1.0},         {"ms", 1e-3},   {"us", 1e-6}};
  for (const auto& u : units) {
    double n = seconds / u.factor;
    if (n >= 1 && std::fabs(n - std::round(n)) < 1e-9 * n) {
      return std::to_string(static_cast<long long>(std::llround(n))) + u.name;
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", seconds);
  return std::string(buf) + "s";
}

std::string FormatSize(uint64_t bytes) {
  const char* names[] = {"TiB", "GiB", "MiB", "KiB"};
  int shift = 40;
  for (const char* name : names) {
    if (bytes != 0 && bytes % (uint64_t{1} << shift) == 0) {
      return std::to_string(bytes >> shift) + name;
    }
    shift -= 10;
  }
  return std::to_string(bytes) + "B";
}

}  // namespace freshd

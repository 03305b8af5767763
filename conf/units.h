// Parsing of the human units used in freshd's config and command line.
//
// Durations: a number with a unit, "500ms", "5s", "1.5m", "2h", "7d", or a
// combination "1h30m". A bare number is seconds. Sizes: "512", "64KiB",
// "10MiB", "1GiB", also decimal "10kB", "5MB", "1GB". Negative values,
// overflow and unknown units are errors.

#ifndef FRESHD_CONF_UNITS_H_
#define FRESHD_CONF_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace freshd {

// Seconds (fractions allowed), >= 0.
Result<double> ParseDuration(std::string_view text);

// Bytes, >= 0, at most 2^62.
Result<uint64_t> ParseSize(std::string_view text);

// Shortest round-trippable text for a duration / size: 1.5 -> "1500ms",
// 86400 -> "1d", 10485760 -> "10MiB".
std::string FormatDuration(double seconds);
std::string FormatSize(uint64_t bytes);

}  // namespace freshd

#endif  // FRESHD_CONF_UNITS_H_

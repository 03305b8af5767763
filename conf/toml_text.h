// TOML text to a toml11 value, for every TOML file freshd reads (the daemon's
// config, the simulator's web files). Guards toml11 3.7 (Debian 12) against
// what it mishandles, before it sees the text: input over `max_bytes` is
// refused; so is input that is not valid UTF-8 (TOML requires it; toml11's
// own UTF-8 error path reads out of bounds, upstream issue #199); and so is
// input whose shape toml11 handles by unbounded recursion or in quadratic
// time: arrays, inline tables and table headers nested deeper than
// kMaxTomlDepth (10,000 '[' overflow its stack), keys of more than
// kMaxTomlKeyParts dotted parts, lines longer than kMaxTomlLineBytes. That
// scan is linear and follows TOML's comments and four string forms, so
// brackets and dots inside strings do not count. Errors are InvalidArgument
// "name:line: TOML syntax error: what" (or "name:line: larger than ..."),
// never exceptions. Thread-safe (pure).
#ifndef FRESHD_CONF_TOML_TEXT_H_
#define FRESHD_CONF_TOML_TEXT_H_

#include <cstddef>
#include <string_view>
#include <toml.hpp>

#include "base/status.h"

namespace freshd {

inline constexpr size_t kMaxTomlBytes = 1 << 20;  // config and web files
inline constexpr size_t kMaxTomlDepth = 32;       // [ { and headers, nested
inline constexpr size_t kMaxTomlKeyParts = 32;    // a.b.c: 3 parts
inline constexpr size_t kMaxTomlLineBytes = 16 << 10;

[[nodiscard]] Result<toml::value> ParseTomlText(
    std::string_view text, std::string_view name,
    size_t max_bytes = kMaxTomlBytes);

}  // namespace freshd

#endif  // FRESHD_CONF_TOML_TEXT_H_

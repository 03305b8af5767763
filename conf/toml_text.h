// TOML text to a toml11 value, for every TOML file freshd reads (the daemon's
// config, the simulator's web files). Guards toml11 3.7 (Debian 12) against
// what it mishandles: input over `max_bytes` is refused before parsing, and
// so is input that is not valid UTF-8 (TOML requires it; toml11's own UTF-8
// error path reads out of bounds, upstream issue #199). Errors are
// InvalidArgument "name:line: TOML syntax error: what" (or "name: ..."),
// never exceptions. Thread-safe (pure).
#ifndef FRESHD_CONF_TOML_TEXT_H_
#define FRESHD_CONF_TOML_TEXT_H_

#include <cstddef>
#include <string_view>
#include <toml.hpp>

#include "base/status.h"

namespace freshd {

inline constexpr size_t kMaxTomlBytes = 1 << 20;  // config and web files

Result<toml::value> ParseTomlText(std::string_view text, std::string_view name,
                                  size_t max_bytes = kMaxTomlBytes);

}  // namespace freshd

#endif  // FRESHD_CONF_TOML_TEXT_H_

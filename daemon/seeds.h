// The seeds file of `freshd run --seeds` / [crawler] seeds: one URL per
// line, optionally followed by whitespace and a weight (importance μ > 0,
// default 1); blank lines and lines starting with '#' are skipped. URLs are
// checked later, when added (CrawlLoop::AddSeed reports each bad one).
// Bounded: lines of at most kMaxSeedLineBytes, at most kMaxSeeds seeds.
// Pure functions; thread-safe.

#ifndef FRESHD_DAEMON_SEEDS_H_
#define FRESHD_DAEMON_SEEDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace freshd::daemon {

inline constexpr size_t kMaxSeedLineBytes = 16 * 1024;
inline constexpr size_t kMaxSeeds = 10'000'000;

struct Seed {
  std::string url;
  double weight = 1;
  size_t line = 0;  // 1-based, for messages
};

// Parses seeds text. InvalidArgument "NAME:LINE: what" for a bad weight,
// extra fields, an over-long line or too many seeds.
Result<std::vector<Seed>> ParseSeeds(std::string_view text,
                                     std::string_view name);
// Reads and parses a file; IOError if it cannot be read.
Result<std::vector<Seed>> ReadSeedsFile(const std::string& path);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_SEEDS_H_

// The seeds file of `freshd run --seeds` / [crawler] seeds: one URL per
// line, optionally followed by whitespace and a weight (importance μ > 0,
// default 1); blank lines and lines starting with '#' are skipped. URLs are
// checked later, when added (CrawlLoop::AddSeed reports each bad one).
// Bounded: lines of at most kMaxSeedLineBytes, at most kMaxSeeds seeds.
// ForEachSeedInFile streams a file (64 KiB pieces: memory bounded whatever
// its size); the daemon checks a seeds file with it before opening the
// store and adds the seeds with it after (cli/cmd_run.cc).
// Pure functions; thread-safe.

#ifndef FRESHD_DAEMON_SEEDS_H_
#define FRESHD_DAEMON_SEEDS_H_

#include <functional>
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
// Calls fn with each seed of the file in order (the Seed is valid during
// the call only), stopping at the first error: the parse's as ParseSeeds,
// IOError if the file cannot be read, or fn's.
using SeedFn = std::function<Status(const Seed&)>;
[[nodiscard]] Status ForEachSeedInFile(const std::string& path,
                                       const SeedFn& fn);
// Reads and parses a whole file into memory (small files: tests, tools);
// IOError if it cannot be read.
Result<std::vector<Seed>> ReadSeedsFile(const std::string& path);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_SEEDS_H_

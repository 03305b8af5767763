// A real change history (issue 42): which pages existed, when each changed,
// was created or deleted, read from a CSV trace. The simulator replays it
// (sim/trace_replay.h) instead of drawing Poisson changes.
//
// Format (sim/README.md, "Traces"): CSV with RFC 4180 quoting (fields in
// double quotes may hold commas, newlines and "" for a quote; CRLF or LF
// line ends). The first record is a header naming the columns, in any
// order, case-insensitive: `url` and `time` required, `importance` and
// `event` optional, other columns ignored. `time` is Unix seconds (integer
// or decimal) or RFC 3339 / W3C datetime (fractions of a second dropped);
// `event` is `change` (the default when empty or absent), `create` or
// `delete`. A row whose `time` is empty declares a page that exists
// throughout and never changes (its event must be empty or `change`).
// Rows come in any order; a duplicate (url, time, event) counts once; URLs
// are normalised as the crawler normalises them (parse::NormalizeUrl), so
// two spellings of one URL are one page. `importance` (μ, > 0, at most
// kMaxSimImportance; 1 when never given) is one value per page: two
// different values for one page are an error. Blank lines are skipped.
//
// A page's lifetime is one interval: from its first `create` (or from the
// start when it has none, or when a `delete` comes before it) to its last
// `delete` (or the end when it has none, or when a `create` comes after it:
// deleted and created again, the page counts throughout); a page deleted
// at the time it is created never existed and is left out (counted). Changes
// outside the lifetime are dropped; a `create` that does not start the lifetime
// (a re-creation) counts as a change. LoadTrace reads plain or gzip-compressed
// files (tests/data/traces keeps them compressed). Every size is bounded
// (TraceLimits); a malformed or
// oversized row is InvalidArgument "NAME:LINE: what" (LINE the 1-based line
// the record starts on), never an exception or a crash.
//
// Memory: per page one interned URL, its host index, μ, its lifetime and a
// sorted vector of change times (8 bytes each); 10M changes take ~100 MB.
// Pure functions; thread-safe. Value types.

#ifndef FRESHD_SIM_TRACE_H_
#define FRESHD_SIM_TRACE_H_

#include <cstdint>
#include <istream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace freshd::sim {

struct TraceLimits {
  size_t max_record_bytes = 64 * 1024;  // one record, quotes included
  size_t max_fields = 64;               // columns of a record
  uint64_t max_pages = 10'000'000;
  uint64_t max_events = 50'000'000;  // rows with a time (before dedup)
};

struct TracePage {
  uint32_t host = 0;  // index into Trace::hosts
  double importance = 1;
  // Unix seconds; -inf: exists before the trace starts; +inf: never deleted.
  double created = -std::numeric_limits<double>::infinity();
  double deleted = std::numeric_limits<double>::infinity();
  std::vector<double> changes;  // Unix seconds, sorted, distinct
};

struct Trace {
  std::vector<std::string> urls;   // normalised, by page index
  std::vector<std::string> hosts;  // distinct hosts (authority), sorted
  std::vector<TracePage> pages;    // sorted by URL
  // Earliest and latest time of any event; both NaN when no row has a time.
  double first_time = std::numeric_limits<double>::quiet_NaN();
  double last_time = std::numeric_limits<double>::quiet_NaN();
  uint64_t changes = 0;  // Σ pages[i].changes.size()
  uint64_t rows = 0;     // data records read (blank lines not counted)
  // Pages created and deleted at one time (never existed): left out.
  uint64_t empty_lifetimes = 0;
};

// Reads a trace from `in`; `name` stands in for the file in messages.
[[nodiscard]] Result<Trace> ParseTrace(std::istream& in, std::string_view name,
                                       const TraceLimits& limits = {});
[[nodiscard]] Result<Trace> ParseTraceText(std::string_view text,
                                           std::string_view name,
                                           const TraceLimits& limits = {});
// NotFound / IOError when the file cannot be read.
[[nodiscard]] Result<Trace> LoadTrace(const std::string& path,
                                      const TraceLimits& limits = {});

// A `time` value: Unix seconds ("[-]D+[.D*]") or an RFC 3339 / W3C datetime
// with a full date, within years 1..9999; false otherwise.
bool ParseTraceTime(std::string_view text, double* unix_seconds);

// The page's true mean change rate within [from, to] ∩ its lifetime
// (changes per second, the stationary oracle's Δ); 0 when it never changes
// there or lives no time in it.
double TraceMeanRate(const TracePage& page, double from, double to);

}  // namespace freshd::sim

#endif  // FRESHD_SIM_TRACE_H_

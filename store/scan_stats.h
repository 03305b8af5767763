// ScanStats: what a full scan of one of the store's tables saw.
// Thread-safety: a plain value.

#ifndef FRESHD_STORE_SCAN_STATS_H_
#define FRESHD_STORE_SCAN_STATS_H_

#include <cstdint>
#include <string>

namespace freshd::store {

// Corrupt records are skipped only when the scan is asked to.
struct ScanStats {
  uint64_t records = 0;  // decoded and passed to the callback
  uint64_t corrupt = 0;  // failed to decode (skipped)
  // LevelDB's first read error (a table block failing its checksum, a
  // missing table file); under skip_corrupt the scan went on past it and
  // the records of the damaged block(s) were not seen. Empty: none.
  std::string read_error;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_SCAN_STATS_H_

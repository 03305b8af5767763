// Offline store maintenance behind `freshd store check` and `freshd store
// repair`: a full verification of a store directory, and LevelDB's RepairDB
// followed by the same verification, each reporting damage exactly (which
// kind, and how many pages it cost against the store's own page count).
// The store must not be open elsewhere (LevelDB's lock refuses it: IOError).
// Not thread-safe; call from one thread.

#ifndef FRESHD_STORE_STORE_CHECK_H_
#define FRESHD_STORE_STORE_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace freshd::store {

struct StoreCheckReport {
  bool opened = false;          // LevelDB opened it (else see problems)
  uint64_t pages_expected = 0;  // the store's page count (or last sync's)
  bool expected_known = false;
  uint64_t pages = 0;  // page records read and decoded
  uint64_t hosts = 0;  // host records read and decoded
  // The store's schema (store/migrations.h); older than kSchemaVersion: the
  // check read it as it is, and the daemon's next start migrates it.
  uint64_t schema_version = 0;
  uint64_t corrupt_records = 0;  // records whose value failed to decode
  // One sentence per kind of damage found; empty when the store is healthy.
  std::vector<std::string> problems;
  // LevelDB's own log lines about damage (info log, captured).
  std::vector<std::string> leveldb_log;

  bool healthy() const { return problems.empty(); }
  // Pages expected but not readable (0 if not known or none).
  uint64_t pages_lost() const {
    return expected_known && pages_expected > pages ? pages_expected - pages
                                                    : 0;
  }
};

// Opens the store at `path` (paranoid checks; LevelDB replays its log as on
// any open; an older schema is not migrated) and reads every record,
// verifying block checksums.
// Errors: NotFound (no such directory), InvalidArgument (not a freshd
// store), IOError (locked by a running freshd, I/O failure). Damage is not
// an error: it is in the report.
Result<StoreCheckReport> CheckStore(const std::string& path);

struct StoreRepairReport {
  StoreCheckReport before;  // CheckStore before the repair
  StoreCheckReport after;   // CheckStore after it
  // What RepairDB said it salvaged and dropped (its info log).
  std::vector<std::string> repair_log;
  uint64_t pages_lost = 0;  // pages known before the damage, not after
  // Records written back from blocks that failed their checksum (their key
  // and value decode; a flipped byte inside a field cannot be ruled out).
  uint64_t records_from_damaged_blocks = 0;
};

// CheckStore, then leveldb::RepairDB (damaged files are moved to
// path/lost/, what their blocks still hold written back: every record of
// an intact block, and those of a damaged block that decode), then resets the
// page count to the pages actually present and the sync marker, then CheckStore
// again. Errors as CheckStore's, and IOError/Corruption if RepairDB fails.
Result<StoreRepairReport> RepairStore(const std::string& path);

}  // namespace freshd::store

#endif  // FRESHD_STORE_STORE_CHECK_H_

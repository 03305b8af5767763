// The store's schema migrations: a chain of steps, step N taking a store at
// schema N to schema N + 1. StoreCore::Open runs the steps from the
// store's schema up to kSchemaVersion before anything reads it, and says in
// StoreCore::migrations() what each did; a store newer than kSchemaVersion
// is refused. store/README.md, *Versioning*, lists the schemas.
//
// A step works on the LevelDB database directly, in batches, and writes the
// schema key (N + 1) in its last, synced batch: a step interrupted by a crash
// runs again on the next open, so every step is idempotent. A step does not
// change the commit sequence or the page count (the sync marker's check
// holds across it). Records it cannot decode are left as they are (the
// open's scans report them); a damaged block it cannot read is skipped and
// named in its summary (its records keep their older encoding, which the
// record decoders read).
// Thread-safety: the open's thread, before the store is shared.

#ifndef FRESHD_STORE_MIGRATIONS_H_
#define FRESHD_STORE_MIGRATIONS_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace leveldb {
class DB;
}  // namespace leveldb

namespace freshd::store {

// The schema this build writes.
//   1  the first (PageRecord v1/v2, HostRecord v1/v2, a signal log 'S'/'N')
//   2  no signal log; PageRecord v3 (no sketch field), HostRecord v3 (no
//      robots/politeness fields)
inline constexpr uint32_t kSchemaVersion = 2;

struct MigrationStep {
  uint32_t from;     // the schema it migrates (to from + 1)
  const char* what;  // one line: what it does
  // Runs the step; *summary says what it changed, with counts.
  Status (*run)(leveldb::DB& db, std::string* summary);
};

// Every step, in order: chain[i].from == i + 1.
std::span<const MigrationStep> MigrationChain();

// Runs the steps from schema `from` (1 <= from <= kSchemaVersion) to
// kSchemaVersion, appending one line per step to *log ("schema 1 -> 2: ...").
// Stops at the first step that fails (its Status: IOError from LevelDB).
Status Migrate(leveldb::DB& db, uint64_t from, std::vector<std::string>* log);

// Step 1 -> 2: deletes the signal log (every 'S' key and 'N'), which no
// freshd ever wrote in production, and rewrites every page record without
// its always-empty sketch field (v3) and every host record without the
// seven robots and politeness fields that daemon/fetch_state.h superseded
// (v3). Page, host, feed, sketch and capture contents are read back the
// same.
Status MigrateSchema1To2(leveldb::DB& db, std::string* summary);

}  // namespace freshd::store

#endif  // FRESHD_STORE_MIGRATIONS_H_

// What the tables share for reading LevelDB: Status from leveldb::Status,
// keys made printable for messages, and the full scan of one key type with
// its corruption policy (ScanStats). Used inside store/ only.
// Thread-safety: pure functions; Scan reads through the caller's hold on
// the database (store/store_core.h).

#ifndef FRESHD_STORE_SCAN_H_
#define FRESHD_STORE_SCAN_H_

#include <leveldb/db.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/scan_stats.h"

namespace freshd::store {

// `s` as a Status whose message starts with `what`; NotFound, Corruption and
// InvalidArgument keep their code, anything else is an IOError.
Status FromLevelDb(const leveldb::Status& s, std::string_view what);

// The first 96 bytes of `key`, non-printable bytes as \xNN.
std::string Printable(std::string_view key);

// Iterates the keys starting with `prefix` from `start`; `decode` turns one
// (key, value) into a record or a Status. A record that does not decode
// stops the scan with Corruption naming its key, unless skip_corrupt (then
// it is counted in stats->corrupt). Blocks are checksummed and not cached
// (a full scan must not evict the hot set).
template <typename Record, typename DecodeFn>
Status Scan(leveldb::DB& db, char prefix, const std::string& start,
            DecodeFn decode, const std::function<bool(const Record&)>& fn,
            ScanStats* stats, bool skip_corrupt) {
  ScanStats local;
  ScanStats& st = stats != nullptr ? *stats : local;
  leveldb::ReadOptions ro;
  ro.fill_cache = false;
  ro.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(db.NewIterator(ro));
  for (it->Seek(start); it->Valid(); it->Next()) {
    leveldb::Slice k = it->key();
    if (k.empty() || k[0] != prefix) break;
    Record record;
    Status s = decode(std::string_view(k.data(), k.size()),
                      std::string_view(it->value().data(), it->value().size()),
                      &record);
    if (!s.ok()) {
      if (!skip_corrupt)
        return Status::Corruption("key '" + Printable({k.data(), k.size()}) +
                                  "': " + s.message());
      ++st.corrupt;
      continue;
    }
    ++st.records;
    if (!fn(record)) return Status::OK();
  }
  // A block failing its checksum is skipped by LevelDB's iterator, which
  // goes on and keeps the first such error.
  if (!it->status().ok() && skip_corrupt) {
    st.read_error = it->status().ToString();
    return Status::OK();
  }
  return FromLevelDb(it->status(), "scan");
}

}  // namespace freshd::store

#endif  // FRESHD_STORE_SCAN_H_

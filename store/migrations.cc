#include "store/migrations.h"

#include <leveldb/db.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <array>
#include <memory>
#include <string_view>

#include "base/coding.h"
#include "store/keys.h"
#include "store/records.h"
#include "store/scan.h"

namespace freshd::store {
namespace {

// Schema 1's signal log, retired by step 1 -> 2 (store/keys.h).
constexpr char kRetiredSignalPrefix = 'S';
constexpr char kRetiredSignalSeqKey[] = "N";

// Writes a step's changes in batches of kChunk operations.
class ChunkedWriter {
 public:
  explicit ChunkedWriter(leveldb::DB& db) : db_(db) {}
  Status Put(const leveldb::Slice& key, const leveldb::Slice& value) {
    batch_.Put(key, value);
    return Count();
  }
  Status Delete(const leveldb::Slice& key) {
    batch_.Delete(key);
    return Count();
  }
  // The last batch, with the schema key, synced.
  Status Finish(uint64_t schema) {
    std::string v;
    PutVarint64(&v, schema);
    batch_.Put(kSchemaKey, v);
    leveldb::WriteOptions wo;
    wo.sync = true;
    return FromLevelDb(db_.Write(wo, &batch_), "migration");
  }

 private:
  static constexpr int kChunk = 10000;
  Status Count() {
    if (++ops_ < kChunk) return Status::OK();
    ops_ = 0;
    Status s =
        FromLevelDb(db_.Write(leveldb::WriteOptions(), &batch_), "migration");
    batch_.Clear();
    return s;
  }
  leveldb::DB& db_;
  leveldb::WriteBatch batch_;
  int ops_ = 0;
};

// Rewrites every record of `prefix` whose value is older than `version`
// with `recode` (decode any version, encode the current one). Counts
// rewritten and undecodable records; a read error ends the range early and
// is kept in *read_error.
template <typename Record, typename DecodeFn, typename EncodeFn>
Status Recode(leveldb::DB& db, char prefix, uint8_t version, DecodeFn decode,
              EncodeFn encode, ChunkedWriter* out, uint64_t* rewritten,
              uint64_t* undecodable, std::string* read_error) {
  leveldb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(db.NewIterator(ro));
  std::string encoded;
  for (it->Seek(std::string(1, prefix)); it->Valid(); it->Next()) {
    leveldb::Slice k = it->key();
    if (k.empty() || k[0] != prefix) break;
    std::string_view value(it->value().data(), it->value().size());
    if (!value.empty() && static_cast<uint8_t>(value[0]) >= version) continue;
    Record record;
    if (!decode(value, &record).ok() || !encode(record, &encoded).ok()) {
      ++*undecodable;
      continue;
    }
    if (Status s = out->Put(k, encoded); !s.ok()) return s;
    ++*rewritten;
  }
  if (!it->status().ok() && read_error->empty())
    *read_error = it->status().ToString();
  return Status::OK();
}

constexpr std::array<MigrationStep, 1> kChain = {{
    {1,
     "drop the signal log ('S', 'N') and the dead page and host record "
     "fields",
     MigrateSchema1To2},
}};
static_assert(kChain.size() == kSchemaVersion - 1,
              "one migration step per schema after the first");

}  // namespace

std::span<const MigrationStep> MigrationChain() { return kChain; }

Status Migrate(leveldb::DB& db, uint64_t from, std::vector<std::string>* log) {
  if (from < 1 || from > kSchemaVersion)
    return Status::InvalidArgument("no migration from schema " +
                                   std::to_string(from));
  for (const MigrationStep& step : kChain) {
    if (step.from < from) continue;
    std::string summary;
    if (Status s = step.run(db, &summary); !s.ok()) {
      return Status::IOError("schema " + std::to_string(step.from) + " -> " +
                             std::to_string(step.from + 1) + ": " +
                             s.message());
    }
    log->push_back("schema " + std::to_string(step.from) + " -> " +
                   std::to_string(step.from + 1) + ": " + step.what + ": " +
                   summary);
  }
  return Status::OK();
}

Status MigrateSchema1To2(leveldb::DB& db, std::string* summary) {
  ChunkedWriter out(db);
  std::string read_error;
  uint64_t signals = 0;
  {
    leveldb::ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<leveldb::Iterator> it(db.NewIterator(ro));
    for (it->Seek(std::string(1, kRetiredSignalPrefix)); it->Valid();
         it->Next()) {
      leveldb::Slice k = it->key();
      if (k.empty() || k[0] != kRetiredSignalPrefix) break;
      if (Status s = out.Delete(k); !s.ok()) return s;
      ++signals;
    }
    if (!it->status().ok()) read_error = it->status().ToString();
  }
  std::string seq;
  leveldb::Status g =
      db.Get(leveldb::ReadOptions(), kRetiredSignalSeqKey, &seq);
  if (g.ok()) {
    if (Status s = out.Delete(kRetiredSignalSeqKey); !s.ok()) return s;
  } else if (!g.IsNotFound()) {
    return FromLevelDb(g, "read the signal sequence key");
  }
  uint64_t pages = 0, hosts = 0, undecodable = 0;
  if (Status s = Recode<PageRecord>(db, kPagePrefix, 3, DecodePageValue,
                                    EncodePageValue, &out, &pages, &undecodable,
                                    &read_error);
      !s.ok()) {
    return s;
  }
  if (Status s = Recode<HostRecord>(db, kHostPrefix, 3, DecodeHostValue,
                                    EncodeHostValue, &out, &hosts, &undecodable,
                                    &read_error);
      !s.ok()) {
    return s;
  }
  if (Status s = out.Finish(2); !s.ok()) return s;
  *summary = std::to_string(signals) + " signal entries deleted" +
             (g.ok() ? " (and their sequence key)" : "") + ", " +
             std::to_string(pages) + " page and " + std::to_string(hosts) +
             " host records rewritten";
  if (undecodable > 0)
    *summary += ", " + std::to_string(undecodable) +
                " records left as they were (they do not decode)";
  if (!read_error.empty())
    *summary += "; a damaged block was skipped (" + read_error +
                "): its records keep their older encoding";
  return Status::OK();
}

}  // namespace freshd::store

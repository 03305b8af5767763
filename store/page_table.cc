#include "store/page_table.h"

#include <leveldb/db.h>

#include <string>

#include "store/keys.h"
#include "store/scan.h"

namespace freshd::store {
namespace {

Status DecodePageEntry(std::string_view key, std::string_view value,
                       PageRecord* out) {
  if (!ParsePageKey(key, &out->url_key, &out->url))
    return Status::Corruption("malformed page key");
  return DecodePageValue(value, out);
}

}  // namespace

Result<PageRecord> PageTable::Get(uint64_t url_key,
                                  std::string_view url) const {
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  std::string value;
  leveldb::Status s =
      hold->db().Get(leveldb::ReadOptions(), PageKey(url_key, url), &value);
  if (!s.ok()) return FromLevelDb(s, "page " + std::string(url));
  PageRecord page;
  page.url_key = url_key;
  page.url = std::string(url);
  if (Status d = DecodePageValue(value, &page); !d.ok()) return d;
  return page;
}

Result<bool> PageTable::Contains(uint64_t url_key, std::string_view url) const {
  // LevelDB's Get consults the memtables, then per candidate table the
  // bloom filter block (cached) before any data block: a miss reads no data.
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  std::string value;
  leveldb::Status s =
      hold->db().Get(leveldb::ReadOptions(), PageKey(url_key, url), &value);
  if (s.IsNotFound()) return false;
  if (!s.ok()) return FromLevelDb(s, "contains");
  return true;
}

Status PageTable::ForEach(const std::function<bool(const PageRecord&)>& fn,
                          ScanStats* stats, bool skip_corrupt) const {
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  return Scan<PageRecord>(hold->db(), kPagePrefix, std::string(1, kPagePrefix),
                          DecodePageEntry, fn, stats, skip_corrupt);
}

}  // namespace freshd::store

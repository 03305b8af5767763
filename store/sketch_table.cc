#include "store/sketch_table.h"

#include <leveldb/db.h>

#include "store/keys.h"
#include "store/scan.h"

namespace freshd::store {

Result<std::string> SketchTable::Get(uint64_t url_key,
                                     std::string_view url) const {
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  std::string value;
  leveldb::Status s =
      hold->db().Get(leveldb::ReadOptions(), SketchKey(url_key, url), &value);
  if (!s.ok()) return FromLevelDb(s, "sketch " + std::string(url));
  return value;
}

}  // namespace freshd::store

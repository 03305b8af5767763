#include "store/host_table.h"

#include <leveldb/db.h>

#include <string>

#include "store/keys.h"
#include "store/scan.h"

namespace freshd::store {
namespace {

Status DecodeHostEntry(std::string_view key, std::string_view value,
                       HostRecord* out) {
  if (!ParseHostKey(key, &out->host))
    return Status::Corruption("malformed host key");
  return DecodeHostValue(value, out);
}

}  // namespace

Result<HostRecord> HostTable::Get(std::string_view host) const {
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  std::string value;
  leveldb::Status s =
      hold->db().Get(leveldb::ReadOptions(), HostKey(host), &value);
  if (!s.ok()) return FromLevelDb(s, "host " + std::string(host));
  HostRecord record;
  record.host = std::string(host);
  if (Status d = DecodeHostValue(value, &record); !d.ok()) return d;
  return record;
}

Status HostTable::ForEach(const std::function<bool(const HostRecord&)>& fn,
                          ScanStats* stats, bool skip_corrupt) const {
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  return Scan<HostRecord>(hold->db(), kHostPrefix, std::string(1, kHostPrefix),
                          DecodeHostEntry, fn, stats, skip_corrupt);
}

}  // namespace freshd::store

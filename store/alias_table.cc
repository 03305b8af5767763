#include "store/alias_table.h"

#include <leveldb/db.h>

#include <string>

#include "base/coding.h"
#include "store/keys.h"
#include "store/scan.h"

namespace freshd::store {
namespace {

constexpr uint8_t kAliasValueVersion = 1;

Status DecodeAliasEntry(std::string_view key, std::string_view value,
                        AliasRecord* out) {
  if (!ParseAliasKey(key, &out->url_key, &out->url)) {
    return Status::Corruption("malformed alias key");
  }
  return DecodeAliasValue(value, out);
}

}  // namespace

std::string EncodeAliasValue(const AliasRecord& record) {
  std::string value;
  PutByte(&value, kAliasValueVersion);
  PutByte(&value, record.reason);
  PutLengthPrefixed(&value, record.target);
  return value;
}

Status DecodeAliasValue(std::string_view value, AliasRecord* record) {
  Decoder d(value);
  uint8_t version = 0;
  if (!d.GetByte(&version) || version != kAliasValueVersion ||
      !d.GetByte(&record->reason) ||
      !d.GetLengthPrefixed(&record->target, kMaxAliasUrlBytes) || !d.done()) {
    return Status::Corruption("alias value: unknown version or form");
  }
  return Status::OK();
}

Status AliasTable::ForEach(const std::function<bool(const AliasRecord&)>& fn,
                           bool skip_corrupt) const {
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  return Scan<AliasRecord>(hold->db(), kAliasPrefix,
                           std::string(1, kAliasPrefix), DecodeAliasEntry, fn,
                           nullptr, skip_corrupt);
}

}  // namespace freshd::store

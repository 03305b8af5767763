#include "store/subscription_table.h"

#include <leveldb/db.h>

#include <string>

#include "base/coding.h"
#include "store/keys.h"
#include "store/scan.h"

namespace freshd::store {
namespace {

constexpr uint8_t kSubscriptionValueVersion = 1;

Status DecodeSubscriptionEntry(std::string_view key, std::string_view value,
                               SubscriptionRecord* out) {
  if (!ParseSubscriptionKey(key, &out->id) ||
      out->id.size() > kMaxSubscriptionIdBytes) {
    return Status::Corruption("malformed subscription key");
  }
  return DecodeSubscriptionValue(value, out);
}

}  // namespace

std::string EncodeSubscriptionValue(const SubscriptionRecord& record) {
  std::string value;
  PutByte(&value, kSubscriptionValueVersion);
  PutLengthPrefixed(&value, record.feed_url);
  PutLengthPrefixed(&value, record.topic);
  PutLengthPrefixed(&value, record.hub);
  PutLengthPrefixed(&value, record.secret);
  PutByte(&value, record.state);
  PutDouble(&value, record.lease_end_unix);
  PutDouble(&value, record.next_action_unix);
  PutVarint64(&value, record.failures);
  return value;
}

Status DecodeSubscriptionValue(std::string_view value,
                               SubscriptionRecord* record) {
  Decoder d(value);
  uint8_t version = 0;
  uint64_t failures = 0;
  if (!d.GetByte(&version) || version != kSubscriptionValueVersion ||
      !d.GetLengthPrefixed(&record->feed_url, kMaxSubscriptionUrlBytes) ||
      !d.GetLengthPrefixed(&record->topic, kMaxSubscriptionUrlBytes) ||
      !d.GetLengthPrefixed(&record->hub, kMaxSubscriptionUrlBytes) ||
      !d.GetLengthPrefixed(&record->secret, kMaxSubscriptionSecretBytes) ||
      !d.GetByte(&record->state) || !d.GetDouble(&record->lease_end_unix) ||
      !d.GetDouble(&record->next_action_unix) || !d.GetVarint64(&failures) ||
      failures > UINT32_MAX || !d.done()) {
    return Status::Corruption("subscription value: unknown version or form");
  }
  record->failures = static_cast<uint32_t>(failures);
  return Status::OK();
}

Status SubscriptionTable::ForEach(
    const std::function<bool(const SubscriptionRecord&)>& fn,
    bool skip_corrupt) const {
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  return Scan<SubscriptionRecord>(
      hold->db(), kSubscriptionPrefix, std::string(1, kSubscriptionPrefix),
      DecodeSubscriptionEntry, fn, nullptr, skip_corrupt);
}

}  // namespace freshd::store

#include "store/control_table.h"

#include <leveldb/db.h>

#include <bit>
#include <cstring>
#include <string>

#include "store/keys.h"
#include "store/scan.h"

namespace freshd::store {
namespace {

constexpr uint8_t kControlValueVersion = 1;
constexpr size_t kControlValueBytes = 10;

Status DecodeControlEntry(std::string_view key, std::string_view value,
                          ControlRecord* out) {
  if (!ParseControlKey(key, &out->kind, &out->target) ||
      (out->kind != ControlRecord::kHost &&
       out->kind != ControlRecord::kPattern)) {
    return Status::Corruption("malformed control key");
  }
  return DecodeControlValue(value, out);
}

}  // namespace

std::string EncodeControlValue(const ControlRecord& record) {
  std::string value;
  value.push_back(static_cast<char>(kControlValueVersion));
  value.push_back(static_cast<char>(record.action));
  const uint64_t bits = std::bit_cast<uint64_t>(record.since_unix);
  for (int i = 0; i < 8; ++i) {
    value.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
  return value;
}

Status DecodeControlValue(std::string_view value, ControlRecord* record) {
  if (value.size() != kControlValueBytes ||
      static_cast<uint8_t>(value[0]) != kControlValueVersion) {
    return Status::Corruption("control value: unknown version or size");
  }
  const auto action = static_cast<uint8_t>(value[1]);
  if (action != ControlRecord::kPause && action != ControlRecord::kBlock) {
    return Status::Corruption("control value: unknown action");
  }
  uint64_t bits = 0;
  for (int i = 7; i >= 0; --i) {
    bits = (bits << 8) | static_cast<uint8_t>(value[2 + i]);
  }
  record->action = action;
  record->since_unix = std::bit_cast<double>(bits);
  return Status::OK();
}

Status ControlTable::ForEach(
    const std::function<bool(const ControlRecord&)>& fn,
    bool skip_corrupt) const {
  Result<StoreCore::ReadHold> hold = core_->Read();
  if (!hold.ok()) return hold.status();
  return Scan<ControlRecord>(hold->db(), kControlPrefix,
                             std::string(1, kControlPrefix), DecodeControlEntry,
                             fn, nullptr, skip_corrupt);
}

}  // namespace freshd::store

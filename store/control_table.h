// ControlTable: the operators' runtime controls (daemon/operator_controls.h)
// as stored: key 'O' + kind + target (store/keys.h), value ControlValue
// below. Read side only: written through StoreBatch::PutControl /
// DeleteControl with the engine's group commit. A store without the prefix
// (every store before controls existed) simply has none, so the schema
// version stays 2 and no migration is needed; an older freshd ignores the
// keys (it reads only the prefixes it knows).
// Thread-safety: the store's rule, store/store_core.h.

#ifndef FRESHD_STORE_CONTROL_TABLE_H_
#define FRESHD_STORE_CONTROL_TABLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/store_core.h"

namespace freshd::store {

struct ControlRecord {
  static constexpr char kHost = 'h';     // target: a host name or authority
  static constexpr char kPattern = 'p';  // target: an RE2 pattern over URLs
  static constexpr uint8_t kPause = 1;
  static constexpr uint8_t kBlock = 2;
  char kind = kHost;
  std::string target;
  uint8_t action = kPause;
  double since_unix = 0;  // when the operator set it
};

// The value: version byte 1, action byte, since_unix (IEEE double, little
// endian). Decode: Corruption for anything else.
std::string EncodeControlValue(const ControlRecord& record);
[[nodiscard]] Status DecodeControlValue(std::string_view value,
                                        ControlRecord* record);

class ControlTable {
 public:
  explicit ControlTable(const StoreCore* core) : core_(core) {}

  // Every control in key order; a record that does not decode is
  // Corruption (with skip_corrupt: skipped). IOError from LevelDB.
  [[nodiscard]] Status ForEach(
      const std::function<bool(const ControlRecord&)>& fn,
      bool skip_corrupt = false) const;

 private:
  const StoreCore* core_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_CONTROL_TABLE_H_

// AliasTable: the aliases as stored: a duplicate URL collapsed into a page
// (daemon/page_book.h "Duplicates": its <link rel=canonical>, or the same
// content as another page of its host), key 'A' + be64(url_key) + the
// alias URL (store/keys.h), value EncodeAliasValue below. Read side only:
// written through StoreBatch::PutAlias / DeleteAlias with the engine's
// group commit. A store without the prefix (every store before aliases)
// simply has none, so the schema version stays as it is and no migration
// is needed; an older freshd ignores the keys (it reads only the prefixes
// it knows).
// Thread-safety: the store's rule, store/store_core.h.

#ifndef FRESHD_STORE_ALIAS_TABLE_H_
#define FRESHD_STORE_ALIAS_TABLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/store_core.h"

namespace freshd::store {

// Longest target URL a record may hold.
inline constexpr size_t kMaxAliasUrlBytes = 8192;

struct AliasRecord {
  uint64_t url_key = 0;  // the alias URL's key (in the LevelDB key)
  std::string url;       // the alias URL (in the LevelDB key)
  std::string target;    // the page it is an alias of (normalized URL)
  uint8_t reason = 0;    // daemon/alias_table.h's AliasReason

  bool operator==(const AliasRecord&) const = default;
};

// Version byte 1, the reason byte, the length-prefixed target. Decode:
// Corruption for anything else or over the bound above.
std::string EncodeAliasValue(const AliasRecord& record);
[[nodiscard]] Status DecodeAliasValue(std::string_view value,
                                      AliasRecord* record);

class AliasTable {
 public:
  explicit AliasTable(const StoreCore* core) : core_(core) {}

  // Every alias in key order; a record that does not decode is Corruption
  // (with skip_corrupt: skipped). IOError from LevelDB.
  [[nodiscard]] Status ForEach(
      const std::function<bool(const AliasRecord&)>& fn,
      bool skip_corrupt = false) const;

 private:
  const StoreCore* core_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_ALIAS_TABLE_H_

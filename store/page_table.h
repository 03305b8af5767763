// PageTable: the store's page records (key 'P' + be64(url_key) + url; value
// store/records.h PageRecord), read side. Pages are written through
// StoreBatch::PutPage / DeletePage and counted by the core (page_count).
// Thread-safety: the store's rule, store/store_core.h.

#ifndef FRESHD_STORE_PAGE_TABLE_H_
#define FRESHD_STORE_PAGE_TABLE_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "base/status.h"
#include "store/records.h"
#include "store/scan_stats.h"
#include "store/store_core.h"

namespace freshd::store {

class PageTable {
 public:
  explicit PageTable(const StoreCore* core) : core_(core) {}

  // NotFound if absent; Corruption if the value fails to decode; IOError
  // from LevelDB; Unavailable after Close (as for every method below).
  Result<PageRecord> Get(uint64_t url_key, std::string_view url) const;

  // "Seen this URL?" A miss is answered by the memtable and one bloom-filter
  // probe per table file that could hold the key (no data block read, in
  // the common case). Error only on IOError.
  Result<bool> Contains(uint64_t url_key, std::string_view url) const;

  // Every page in url_key order; `fn` returns false to stop. A record that
  // does not decode stops the scan with Corruption naming its key, unless
  // skip_corrupt (then counted in stats->corrupt). REQUIRES: `fn` does not
  // write to the store (the scan holds the shared lock).
  Status ForEach(const std::function<bool(const PageRecord&)>& fn,
                 ScanStats* stats = nullptr, bool skip_corrupt = false) const;

 private:
  const StoreCore* core_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_PAGE_TABLE_H_

// HostTable: the store's host records (key 'H' + "host:port"; value
// store/records.h HostRecord: the scheduler's pooled estimates and the
// fetcher's state), read side. Written through StoreBatch::PutHost /
// DeleteHost. (daemon/host_book.h is the daemon's in-memory host table.)
// Thread-safety: the store's rule, store/store_core.h.

#ifndef FRESHD_STORE_HOST_TABLE_H_
#define FRESHD_STORE_HOST_TABLE_H_

#include <functional>
#include <string_view>

#include "base/status.h"
#include "store/records.h"
#include "store/scan_stats.h"
#include "store/store_core.h"

namespace freshd::store {

class HostTable {
 public:
  explicit HostTable(const StoreCore* core) : core_(core) {}

  // NotFound if absent; Corruption if the value fails to decode; IOError
  // from LevelDB; Unavailable after Close.
  Result<HostRecord> Get(std::string_view host) const;

  // Every host in name order, with PageTable::ForEach's corruption policy
  // and requirement.
  Status ForEach(const std::function<bool(const HostRecord&)>& fn,
                 ScanStats* stats = nullptr, bool skip_corrupt = false) const;

 private:
  const StoreCore* core_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_HOST_TABLE_H_

#include "daemon/alias_table.h"

namespace freshd::daemon {

bool AliasTable::Add(uint64_t url_key, sched::PageId page, AliasReason reason) {
  auto it = aliases_.find(url_key);
  if (it != aliases_.end()) {
    it->second = Alias{page, reason};
    return true;
  }
  if (aliases_.size() >= max_) {
    ++refused_;
    return false;
  }
  aliases_.emplace(url_key, Alias{page, reason});
  return true;
}

}  // namespace freshd::daemon

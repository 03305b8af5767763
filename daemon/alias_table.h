// AliasTable: the duplicate URLs collapsed into pages (daemon/page_book.h
// "Duplicates"), in memory: an alias URL's 64-bit key (parse::UrlKey, the
// URL index's key) -> the page it is an alias of and why. An alias is a
// small record, not a page: never selected, never fetched on its own; a
// link, a sitemap entry or a signal naming it reaches its page
// (PageBook::Find). The aliases' durable home is the store's alias table
// (store/alias_table.h), read back at a restart.
// Bounded: at most `max_aliases` (a whole-node cap, [crawler] max_aliases);
// past it Add refuses and counts (refused()), and the URL stays a page.
// Memory: one hash-map node an alias, 43.6 B measured at 1M (8 B key, 4 B page,
// 1 B reason in a 16 B value, the node's next pointer and the allocator's
// header, and a bucket pointer at load factor 1); the URL's bytes are not kept
// here. Not thread-safe: the scheduler's thread, the page book's.

#ifndef FRESHD_DAEMON_ALIAS_TABLE_H_
#define FRESHD_DAEMON_ALIAS_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "sched/observation.h"

namespace freshd::daemon {

// Why a URL is an alias (stored as its byte).
enum class AliasReason : uint8_t { kCanonical = 0, kDuplicate = 1 };
inline const char* AliasReasonName(AliasReason r) {
  return r == AliasReason::kCanonical ? "canonical" : "duplicate";
}

class AliasTable {
 public:
  struct Alias {
    sched::PageId page = 0;
    AliasReason reason = AliasReason::kCanonical;
  };

  explicit AliasTable(size_t max_aliases = 0) : max_(max_aliases) {}

  // The cap (0: no aliases are kept).
  void set_max(size_t max_aliases) { max_ = max_aliases; }
  size_t max() const { return max_; }

  // Makes `url_key` an alias of `page`. False (counted in refused()) when
  // the table is full; an alias already there is replaced.
  bool Add(uint64_t url_key, sched::PageId page, AliasReason reason);
  // The alias of `url_key`, or null.
  const Alias* Find(uint64_t url_key) const {
    auto it = aliases_.find(url_key);
    return it == aliases_.end() ? nullptr : &it->second;
  }

  size_t size() const { return aliases_.size(); }
  // Adds refused because the table was full.
  uint64_t refused() const { return refused_; }

 private:
  size_t max_;
  std::unordered_map<uint64_t, Alias> aliases_;
  uint64_t refused_ = 0;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_ALIAS_TABLE_H_

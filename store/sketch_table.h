// SketchTable: each page's newest text sketch (key 'G' + be64(url_key) + url;
// value base/sketch.h's encoding, at most 1 MiB), the one place a page's
// sketch is stored. The daemon's page book (daemon/page_book.h) is its one
// reader and writer: it puts it with a new/changed feed event's batch
// (StoreBatch::PutSketch) and measures the next event's staleness against
// it; it goes with its page (StoreBatch::DeletePage).
// Thread-safety: the store's rule, store/store_core.h.

#ifndef FRESHD_STORE_SKETCH_TABLE_H_
#define FRESHD_STORE_SKETCH_TABLE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/store_core.h"

namespace freshd::store {

class SketchTable {
 public:
  explicit SketchTable(const StoreCore* core) : core_(core) {}

  // The sketch as PutSketch left it; NotFound if none; IOError from
  // LevelDB; Unavailable after Close.
  Result<std::string> Get(uint64_t url_key, std::string_view url) const;

 private:
  const StoreCore* core_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_SKETCH_TABLE_H_

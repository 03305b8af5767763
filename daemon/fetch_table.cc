#include "daemon/fetch_table.h"

namespace freshd::daemon {

FetchTable::Slot FetchTable::Add(sched::PageId page, double started_unix) {
  Slot slot = free_;
  if (slot == kNoSlot) {
    slot = static_cast<Slot>(slots_.size());
    slots_.emplace_back();
  } else {
    free_ = slots_[slot].page_or_next;
  }
  slots_[slot] = Entry{started_unix, page, kNetwork};
  ++size_;
  ++on_network_;
  return slot;
}

void FetchTable::LeaveNetwork(Slot slot) {
  Entry& e = slots_[slot];
  if (e.state != kNetwork) return;
  e.state = kParse;
  --on_network_;
}

void FetchTable::Remove(Slot slot) {
  Entry& e = slots_[slot];
  if (e.state == kFree) return;
  if (e.state == kNetwork) --on_network_;
  e = Entry{0, free_, kFree};
  free_ = slot;
  --size_;
}

}  // namespace freshd::daemon

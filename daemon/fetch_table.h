// FetchTable: what the dispatcher keeps of each fetch it started, from the
// dispatch to its Finish: when it started (Unix s) and whether it is still
// on the network (else being parsed). It does not say which pages are in
// flight: the scheduler's PageState::kInFlight flag is the one record of
// that (set by Select, cleared by the page's fetched, 304 or failed
// observation). The dispatcher finds a page's fetch through the slot it
// noted beside that flag (Scheduler::SetFetchSlot, PageState::fetch_slot);
// Holds(slot, page) tells a slot of this page's fetch from a stale one.
//
// Why a slab: slots are by fetch, not by page. Memory: 16 B a slot, as many
// slots as fetches were ever in flight at once (connections plus the parse
// queue's: ~16 KB at 1,000), and nothing per known page: the slot index
// sits in the padding of the scheduler's 88-byte PageState. A table by
// PageId would cost 16-24 B a page (160-240 MB at 10M pages, where issue
// #43 aims at ~100 B a page all-in); the std::map it replaces allocated a
// 64-byte node per fetch. A freed slot goes on a free list and is reused
// first: the table grows only past its peak and never shrinks, so no fetch
// allocates.
// Not thread-safe: the dispatcher's (the engine's) thread.

#ifndef FRESHD_DAEMON_FETCH_TABLE_H_
#define FRESHD_DAEMON_FETCH_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sched/observation.h"

namespace freshd::daemon {

class FetchTable {
 public:
  using Slot = uint32_t;

  // Takes a slot for the fetch of `page` started at `started_unix`, on the
  // network.
  Slot Add(sched::PageId page, double started_unix);
  // Whether `slot` holds a fetch of `page` (false for a slot never given,
  // freed, or given since to another page).
  bool Holds(Slot slot, sched::PageId page) const {
    return slot < slots_.size() && slots_[slot].state != kFree &&
           slots_[slot].page_or_next == page;
  }
  // REQUIRES for the three below: the slot holds a fetch (Holds).
  double started_unix(Slot slot) const { return slots_[slot].started_unix; }
  bool on_network(Slot slot) const { return slots_[slot].state == kNetwork; }
  // The fetch is off the network (being parsed).
  void LeaveNetwork(Slot slot);
  // The fetch is over: its slot is free.
  void Remove(Slot slot);

  size_t size() const { return size_; }                // fetches held
  uint64_t on_network() const { return on_network_; }  // of which on it
  size_t capacity() const { return slots_.size(); }    // the peak

 private:
  enum State : uint8_t { kFree, kNetwork, kParse };
  static constexpr Slot kNoSlot = UINT32_MAX;
  struct Entry {
    double started_unix = 0;
    uint32_t page_or_next = kNoSlot;  // held: its page; free: the next free
    State state = kFree;
  };
  static_assert(sizeof(Entry) == 16);

  std::vector<Entry> slots_;
  Slot free_ = kNoSlot;  // the first free slot
  size_t size_ = 0;
  uint64_t on_network_ = 0;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_FETCH_TABLE_H_

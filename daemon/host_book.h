// HostBook: the daemon's map between a host's authority string ("host:port",
// parse::UrlAuthority of a normalized URL) and the dense sched::HostId the
// scheduler and its HostPool index by. Ids are assigned 0, 1, 2, … in the
// order names are first interned; they are process-local (never stored): a
// restarted daemon re-interns names as it reads the store
// (daemon/recovery.h). Bounded by max_hosts.
//
// It is also the one owner of the daemon's durable per-host state beside the
// scheduler's: how many pages the host has (max_urls_per_host) and its fetch
// state as stored (daemon/fetch_state.h encoding: the politeness gate and
// robots.txt). The page book (daemon/page_book.h) owns the table and writes
// each changed host's record from it and the scheduler's HostPool.
//
// Per-host tables that stay elsewhere, each with its thread and why:
// - sched::HostPool (scheduler): the host's rate statistics, part of the
//   scheduler's model; persisted through the book (HostRecord
//   pooled_estimates).
// - HostSlots (daemon/host_slots.h, scheduler's thread): in-flight count
//   and reopening time, a mirror of the network thread's PolitenessGate so
//   dispatch never asks the network thread; not durable (the gate's state
//   is, as this table's fetch state).
// - fetch::PolitenessGate / robots cache (network thread): the live gates;
//   exported into the fetch state here every save.
// - FetchMetrics (scheduler's thread): per-host outcome counters for
//   /status and /metrics; not durable, reset on restart.
// - CrawlLoop's host origins ("scheme://host:port" of the first fetched
//   page, for robots refresh and site feeds) and the cluster's host -> shard
//   cache: derived from URLs, rebuilt on start, never stored.
// Not thread-safe: owned by the scheduler's thread.

#ifndef FRESHD_DAEMON_HOST_BOOK_H_
#define FRESHD_DAEMON_HOST_BOOK_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "sched/observation.h"

namespace freshd::daemon {

class HostBook {
 public:
  // Longest accepted name (an authority is at most 253 + 1 + 5 bytes).
  static constexpr size_t kMaxNameBytes = 1024;

  explicit HostBook(size_t max_hosts = size_t{1} << 22);

  // The id of `name`, assigning the next one if it is new. InvalidArgument
  // for an empty or over-long name; ResourceExhausted when max_hosts names
  // are already known.
  Result<sched::HostId> Intern(std::string_view name);

  // The id of a known name, or nullopt.
  std::optional<sched::HostId> Find(std::string_view name) const;

  // The name of `id`. REQUIRES: id < size().
  const std::string& Name(sched::HostId id) const { return names_[id]; }

  size_t size() const { return names_.size(); }

  // Pages on `id` (0 for an unknown id).
  uint32_t pages(sched::HostId id) const {
    return id < pages_.size() ? pages_[id] : 0;
  }
  // Counts one more page on `id` unless it has `max_pages` already.
  [[nodiscard]] bool AddPage(sched::HostId id, uint32_t max_pages);
  // Counts one page fewer on `id` (a page removed for good), never below 0.
  void RemovePage(sched::HostId id) {
    if (id < pages_.size() && pages_[id] > 0) --pages_[id];
  }
  // Drops every page count (before a restore counts them again).
  void ClearPages() { pages_.assign(names_.size(), 0); }

  // The host's fetch state as stored ("" none). Set returns whether it
  // changed.
  std::string_view fetch_state(sched::HostId id) const {
    return id < fetch_state_.size() ? std::string_view(fetch_state_[id])
                                    : std::string_view();
  }
  bool SetFetchState(sched::HostId id, std::string encoded);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>()(s);
    }
  };

  size_t max_hosts_;
  std::vector<std::string> names_;        // by id
  std::vector<uint32_t> pages_;           // by id
  std::vector<std::string> fetch_state_;  // by id, as stored
  std::unordered_map<std::string, sched::HostId, Hash, std::equal_to<>> ids_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_HOST_BOOK_H_

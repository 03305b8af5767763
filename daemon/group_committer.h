// GroupCommitter: the engine's group commit. It holds what waits for the
// next commit — fetches to archive as WARC (WarcItem), change-feed items
// (FeedItem) and the callbacks waiting for durability — and hands them, with
// the page records the book has marked (RecordSource), to the StoreWriter as
// one job whenever no job of its own is being written; while one is, the
// next grows. A request is served after whatever else is queued on the
// owner's thread, so completions that arrived together commit together.
// pending_bytes() (the WARC payload waiting) is the write queue's share on
// this side of the writer: the dispatcher pauses on it.
// Thread: the engine's (scheduler's) thread, the one running `io`; the
// writer's reports are posted back to it. Stop() ends the posts.

#ifndef FRESHD_DAEMON_GROUP_COMMITTER_H_
#define FRESHD_DAEMON_GROUP_COMMITTER_H_

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/status.h"
#include "daemon/store_writer.h"
#include "fetch/outcome.h"
#include "store/page_store.h"

namespace freshd::daemon {

// Where a commit's page and host records come from (the page book).
struct RecordSource {
  // Whether any record waits.
  std::function<bool()> marked;
  // Moves the records waiting into the batch; counts in `failures` those
  // over the store's limits (not written).
  std::function<void(store::StoreBatch*, uint64_t* failures)> take;
  // The batch `take` filled last was committed (`ok`) or not, before the
  // next `take` (the page book drops the validators it wrote from memory).
  // May be empty.
  std::function<void(bool ok)> committed;
};

class GroupCommitter {
 public:
  // `writer` must outlive this. `archive`: WARC output is on (without it
  // WARC items are dropped).
  GroupCommitter(boost::asio::io_context& io, StoreWriter* writer,
                 RecordSource records, bool archive);
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Runs after each commit's waiters (the engine dispatches: the write
  // queue has room again).
  void set_on_committed(std::function<void()> fn) {
    on_committed_ = std::move(fn);
  }

  // Queues `r`'s raw exchange (and redirect hops) for the next commit; its
  // decoded body is dropped. With `event`, the change-feed item naming this
  // capture. Returns whether it was queued (WARC output on).
  bool AddWarc(fetch::FetchResult r, double started_unix,
               FeedItem* event = nullptr);
  // Queues a change-feed event for the next commit.
  void AddFeed(FeedItem item);

  // Commits soon; `committed` (if given) then runs with the commit's status.
  void Request(std::function<void(Status)> committed = nullptr);
  // No report runs after this (the owner is going away).
  void Stop() { *alive_ = false; }

  uint64_t pending_bytes() const { return pending_warc_bytes_; }
  uint64_t store_errors() const { return store_errors_; }
  bool running() const { return running_; }

 private:
  void Flush();
  void OnCommitted(Status status,
                   std::vector<std::function<void(Status)>> waiters);
  bool HasWork() const;

  boost::asio::io_context& io_;
  StoreWriter* const writer_;
  const RecordSource records_;
  const bool archive_;
  std::function<void()> on_committed_;
  bool running_ = false;  // a job of ours is with the writer
  bool posted_ = false;   // a Flush is queued on io_
  std::vector<WarcItem> pending_warc_;
  std::vector<FeedItem> pending_feed_;  // warc_item indexes pending_warc_
  uint64_t pending_warc_bytes_ = 0;
  std::vector<std::function<void(Status)>> waiters_;
  uint64_t store_errors_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_GROUP_COMMITTER_H_

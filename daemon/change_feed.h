// The change feed over HTTP: GET /changes?since=CURSOR&limit=N[&wait=S].
//
// The feed itself is a log in the store (store/page_store.h, 'E' keys): the
// scheduler's thread makes one event per fetch that finds a page new,
// changed, gone, or unchanged after a change signal, and the writer thread
// appends it in the same LevelDB batch as the page's record (a committed
// page and its event cannot disagree), with its WARC file and offset.
// Events are numbered 1, 2, 3, ... store-wide; the number is the cursor.
//
// Reply (200, application/x-ndjson): one JSON object per line, the events
// with seq > since, oldest first, at most `limit`; then always one last line
//   {"next_cursor": N, "oldest": O, "newest": W, "gap": G, "more": M}
// N is the cursor to send next (the last event's seq, or `since` when none
// came back); "gap" is true when events after `since` were already dropped
// by retention (the reply starts at the oldest kept, O); "more" is true when
// more events than `limit` were waiting. With wait=S (seconds) and nothing
// after `since`, the reply waits until an event is committed or S passed,
// polling the store's bounds on timers of the calling io_context: no thread
// is held. A cursor past the newest event is 409 (the store was replaced).
// Thread-safety: functions; ServeChanges runs on `io`'s thread, the store is
// read from it (PageStore is thread-safe).

#ifndef FRESHD_DAEMON_CHANGE_FEED_H_
#define FRESHD_DAEMON_CHANGE_FEED_H_

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"
#include "daemon/http_server.h"
#include "store/page_store.h"

namespace freshd::daemon {

inline constexpr size_t kFeedDefaultLimit = 1000;
inline constexpr size_t kFeedMaxLimit = 10000;
inline constexpr double kFeedMaxWaitS = 60;
inline constexpr double kFeedPollS = 0.05;

struct FeedQuery {
  uint64_t since = 0;
  size_t limit = kFeedDefaultLimit;
  double wait_s = 0;
};

// Parses the query string of /changes: since (unsigned integer), limit
// (1..kFeedMaxLimit), wait (seconds, 0..kFeedMaxWaitS); InvalidArgument
// naming the parameter otherwise (unknown parameters too).
Result<FeedQuery> ParseFeedQuery(std::string_view query);

// One event as its JSON object, and as its JSON line (no newline).
nlohmann::json FeedEventObject(const store::FeedEvent& event);
std::string FeedEventJson(const store::FeedEvent& event);
// The line the cluster's change stream carries: "node" first, then the
// event's fields as FeedEventJson writes them.
std::string ClusterEventJson(std::string_view node,
                             const store::FeedEvent& event);

// The reply to `query` from what the store holds now.
HttpReply ReadChanges(const store::PageStore& store, const FeedQuery& query);

// Serves GET /changes (the query string after '?') on `io`'s thread and
// calls `respond` once. `store` must outlive `io`'s handlers.
void ServeChanges(boost::asio::io_context& io, const store::PageStore* store,
                  std::string_view query,
                  std::function<void(HttpReply)> respond);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_CHANGE_FEED_H_

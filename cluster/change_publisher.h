// ChangePublisher: a node's change-feed events, also published to the
// cluster's change stream (cluster/README.md "Change feed"), so one
// consumer reads every node's changes in one place.
//
// Publish(seq, json) queues one event after the node's local feed
// committed it (the writer thread calls it in commit order, so seqs rise).
// The queue is bounded (queue_items, queue_bytes): while NATS is
// unreachable it fills, and then the OLDEST event is dropped and counted
// (the local feed still has it) — the writer never blocks. An event's JSON
// over kMaxChangeBytes is replaced by a stub {"node", "seq", "error"}
// (counted bad).
//
// Windowed, asynchronous: the publisher's thread sends a window of up to
// 256 events / 4 MiB (plus the one that crosses it) without waiting
// (js_PublishMsgAsync, at most 256 acknowledgements pending), in seq order
// on its one connection, to stream kChangeStream, subject
// "freshd.changes.<node>", header Nats-Msg-Id "<node>:<seq>"; then awaits
// their acknowledgements together (5 s). The acknowledged prefix is done.
// From the first event without one on, the window goes back to the
// queue's front; after a second (the resend delay) the publisher reads
// the last event the stream holds for this node, skips queued events at
// or below it, and sends the rest again in order with the same Msg-Ids;
// the stream drops a Msg-Id it stored within its duplicate window
// (kChangeDuplicateWindowS, 10 min, far above the 5 s ack wait plus the
// 1 s resend delay). The same resync runs on every (re)connect, so a
// publish stored but not acknowledged is not stored again whatever the
// outage's length. A node whose store was replaced (the stream holds a
// seq above its newest) warns and skips nothing.
//
// Order promised: the stream holds each node's events in seq order, each
// once (subject to the stream's limits dropping the oldest). It rests on
// the server storing, of what one connection sends, each message in order
// (or finding it a duplicate), and on the connection not being re-made by
// the library (a lost connection closes; nothing it buffered is replayed
// on the next one ahead of what was lost). The one case outside it: the
// stream answers an event with an error yet stores a later one (a stream
// made elsewhere with discard=new and a byte limit): that event is stored
// after them, logged and counted `reordered`.
//
// Nothing the local feed still holds is lost: an event not queued (dropped
// from the full queue, or committed before a crash and never published)
// is read back from the local feed through `backfill`, at most 256 at a
// time, before the next queued one. Only events the local feed's retention
// dropped first are lost (counted). A node new to the stream publishes
// the history its local feed retains.
//
// Memory: the queue's bounds plus one window (256 events, ~4 MiB) in
// flight or requeued (a requeued window may take the queue past its
// bounds until the next Publish drops the oldest), plus up to 256 events
// read back from the local feed; acknowledgements kept: one window's.
//
// The stream (created by the first node; later ones bind to it as it is):
// limits retention (discard old), file storage, max_age and max_bytes.
//
// Threads: the publisher's own thread (Start to Stop) owns the connection;
// the library's thread only records acknowledgements (under a mutex);
// Publish and stats() are safe from any thread.

#ifndef FRESHD_CLUSTER_CHANGE_PUBLISHER_H_
#define FRESHD_CLUSTER_CHANGE_PUBLISHER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace freshd::cluster {

inline constexpr char kChangeStream[] = "freshd_changes";
inline constexpr char kChangeSubjectPrefix[] = "freshd.changes.";
inline constexpr size_t kChangeQueueItems = 100000;
inline constexpr size_t kChangeQueueBytes = 32 << 20;
inline constexpr double kChangeMaxAgeS = 7 * 86400.0;
inline constexpr uint64_t kChangeMaxBytes = uint64_t{1} << 30;
inline constexpr double kChangeDuplicateWindowS = 600;
// One event's JSON, at most (a larger one is published as a stub
// {"node", "seq", "error"} and counted bad).
inline constexpr size_t kMaxChangeBytes = 64 << 10;

// One event: its local seq and its JSON line.
struct ChangeEvent {
  uint64_t seq = 0;
  std::string json;
};

// Reads the local feed's events with after < seq < before, oldest first, at
// most `limit`, into `out` (the publisher's thread calls it).
using ChangeBackfillFn = std::function<Status(
    uint64_t after, uint64_t before, size_t limit, std::vector<ChangeEvent>*)>;

struct ChangePublisherOptions {
  std::string nats_url;
  std::string node;  // a valid subject token ([cluster] node)
  std::string stream = kChangeStream;
  double max_age_s = kChangeMaxAgeS;     // the stream's, when creating it
  uint64_t max_bytes = kChangeMaxBytes;  // likewise
  size_t queue_items = kChangeQueueItems;
  size_t queue_bytes = kChangeQueueBytes;
  // The local feed's newest seq when the node started: the stream holding
  // a higher one for this node means another store published it.
  uint64_t local_newest = 0;
  // The local feed, for the events not queued; null: none (then an event
  // not queued is lost, counted).
  ChangeBackfillFn backfill;
};

struct ChangePublisherStats {
  uint64_t queued = 0;      // waiting to be published now
  uint64_t published = 0;   // stored by the stream
  uint64_t dropped = 0;     // pushed out of the full queue
  uint64_t skipped = 0;     // already in the stream (a retry)
  uint64_t bad = 0;         // over kMaxChangeBytes: published as a stub
  uint64_t failures = 0;    // publishes that failed (retried)
  uint64_t backfilled = 0;  // published from the local feed, not the queue
  uint64_t lost = 0;        // neither queued nor in the local feed any more
  uint64_t reordered = 0;   // stored after a later one (refused, then not)
  uint64_t last_seq = 0;    // the newest seq the stream holds from us
  bool connected = false;
};

class ChangePublisher {
 public:
  static Result<std::unique_ptr<ChangePublisher>> Create(
      const ChangePublisherOptions& options);
  ~ChangePublisher();  // Stop()s

  void Start();
  // Stops the thread after giving what is queued a moment (kStopFlushS) to
  // be stored; closes the connection. Idempotent.
  void Stop();

  // Queues event `seq` (its JSON line). Any thread; seqs rising.
  void Publish(uint64_t seq, std::string json);
  ChangePublisherStats stats() const;
  const ChangePublisherOptions& options() const { return options_; }

 private:
  struct Nats;
  using Pending = ChangeEvent;
  explicit ChangePublisher(const ChangePublisherOptions& options);
  void Run();
  bool Connect();
  // Reads the newest seq the stream holds from this node; false on error.
  bool ReadLastSeq();
  void PublishSome();
  // The next event to publish into *p (the backlog's, or the queue's after
  // any backfill its seq needs); false when there is none.
  bool NextEvent(Pending* p, bool* from_backlog);
  // What an event over kMaxChangeBytes is published as.
  std::string Stub(uint64_t seq) const;

  const ChangePublisherOptions options_;
  const std::string subject_;

  // Where every connection's acknowledgements land. It outlives each
  // connection (declared before nats_): the library may still be running
  // an acknowledgement callback on its own thread when a lost connection is
  // destroyed.
  struct Acks;
  std::unique_ptr<Acks> acks_;
  // The publisher's thread only.
  std::unique_ptr<Nats> nats_;
  double next_connect_ = 0;
  double retry_at_ = 0;
  bool resync_ = true;         // read the stream's last seq before publishing
  uint64_t skip_through_ = 0;  // queued events at or below: already stored
  uint64_t retry_from_ = 0;    // refused while a later one was stored; 0 none
  bool connect_failed_logged_ = false;
  bool mismatch_logged_ = false;
  std::deque<Pending> backlog_;  // read back from the local feed; by mu_

  std::atomic<bool> stop_{false};
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;   // guarded by mu_
  size_t queue_bytes_ = 0;      // guarded by mu_
  uint64_t max_seq_ = 0;        // the highest seq queued, guarded by mu_
  ChangePublisherStats stats_;  // guarded by mu_
};

}  // namespace freshd::cluster

#endif  // FRESHD_CLUSTER_CHANGE_PUBLISHER_H_

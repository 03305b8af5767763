// WorkRouter: hands work for hosts this node does not own to their owner,
// through the JetStream work stream (cluster/README.md "Routing").
//
// Publishing: Publish() queues an item (a discovered link, a sitemap entry,
// a POST /signal hint, a seed) for shard `s`; the router's thread stores it
// in stream kWorkStream under subject "freshd.work.<s>". The queue is
// bounded (kPublishQueueItems items, kPublishQueueBytes bytes): while NATS
// is unreachable it fills, and then the OLDEST item is dropped (counted;
// its done callback told Unavailable) — the scheduler's thread never
// blocks, and the newest discoveries are the ones worth keeping. A link
// published recently (kRecentLinks keys) is not published again.
//
// Consuming: each shard has one durable push consumer, "shard-<s>",
// filtered on its subject and shared by whichever node owns the shard (so
// an owner change continues from the old owner's ack floor: nothing
// acknowledged is redelivered, nothing unacknowledged is lost). The stream
// is a work queue: an acknowledged item is removed. SetOwned() subscribes
// the router to the owned shards' delivery subjects; each delivered item is
// handed to `deliver` (batches, on the router's thread) with a token, and
// the daemon acks the token once the item is durable in its page book
// (after its group commit), or naks it (not its shard any more: redelivered
// at once, to the new owner when it subscribes). Unacknowledged items come
// back after kAckWaitS. Deliveries in the daemon's hands are bounded by
// kMaxAckPending per consumer. Items are idempotent by URL: duplicates are
// harmless.
//
// Pages: PublishPage() queues a page's durable record (its store value,
// after the local LevelDB commit) for stream kPageStream, subject
// "freshd.page.<shard>.<url key, 16 hex>", which keeps one message per
// subject (a compacted log: each page's latest record). Its queue is bounded
// like the work queue (kPageQueueItems, kPageQueueBytes; oldest dropped,
// counted: that page's next change publishes it again). When this node
// acquires a shard, the router first replays the shard's subjects from the
// stream (an ephemeral consumer filtered on "freshd.page.<shard>.>",
// reading as many records as it held when created) into `replay`, ending
// with done = true, and only then consumes the shard's work, so the pages
// rebuilt come before the links and signals routed meanwhile.
//
// Threads: the router's own thread (Start to Stop) owns the connection and
// every libnats object but the subscriptions' callbacks, which run on
// libnats' threads and only queue the message under the mutex. Publish,
// SetOwned, Ack, Nak and stats() are safe from any thread.

#ifndef FRESHD_CLUSTER_WORK_ROUTER_H_
#define FRESHD_CLUSTER_WORK_ROUTER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"

namespace freshd::cluster {

inline constexpr char kWorkStream[] = "freshd_work";
inline constexpr char kWorkSubjectPrefix[] = "freshd.work.";
inline constexpr size_t kPublishQueueItems = 100000;
inline constexpr size_t kPublishQueueBytes = 32 << 20;
inline constexpr size_t kRecentLinks = 1 << 18;
inline constexpr double kAckWaitS = 10;
inline constexpr int64_t kMaxAckPending = 512;
// A publish with a done callback that cannot be stored within this is
// answered Unavailable (it stays queued).
inline constexpr double kPublishWaitS = 5;
inline constexpr size_t kMaxUrlBytes = 8192;
inline constexpr char kPageStream[] = "freshd_pages";
inline constexpr char kPageSubjectPrefix[] = "freshd.page.";
inline constexpr size_t kPageQueueItems = 200000;
inline constexpr size_t kPageQueueBytes = 64 << 20;
// Records handed to `replay` at a time.
inline constexpr size_t kReplayBatch = 1024;

// A page's durable record as the page stream carries it.
struct PageState {
  std::string url;
  std::string value;  // store/records.h EncodePageValue
};

struct WorkItem {
  enum class Kind : uint8_t { kLink, kSitemap, kSignal, kSeed };
  Kind kind = Kind::kLink;
  std::string url;  // normalized
  // kSitemap: the entry's lastmod (Unix s; 0: none); kSignal: the claimed
  // change time (-inf: none); kSeed: its weight; kLink: its importance.
  double value = 0;
  // kSitemap, kSignal: the signal's source as the sender names it
  // (sched::SignalSourceName: "indexnow", "websub", "feed", ...), for the
  // owner's per-source estimate; empty: the kind's own ("sitemap",
  // "signal"), as every item before the field.
  std::string source;
};

// The longest source name carried; a longer one is not read.
inline constexpr size_t kMaxSourceBytes = 32;

// The wire form ({"k","u","v","s"} JSON) and back (false for anything
// else). "s" is written only when `source` is set, so an item without one
// is what a node before the field wrote; such a node ignores "s" (it reads
// only k, u and v), and an "s" that is not a short string is not read.
std::string EncodeWork(const WorkItem& item);
bool DecodeWork(std::string_view data, WorkItem* item);

struct DeliveredWork {
  uint64_t token = 0;  // for Ack/Nak
  uint32_t shard = 0;
  WorkItem item;
};

struct WorkRouterOptions {
  std::string nats_url;
  std::string node;
  uint32_t shards = 256;
  std::string stream = kWorkStream;
  std::string page_stream = kPageStream;
  double ack_wait_s = kAckWaitS;
  // How long a publish with a done callback may wait to be stored before
  // the callback is answered Unavailable (it stays queued).
  double publish_wait_s = kPublishWaitS;
};

struct WorkRouterStats {
  uint64_t queued = 0;     // waiting to be published now
  uint64_t published = 0;  // stored by the stream
  uint64_t dropped = 0;    // pushed out of the full queue
  uint64_t deduped = 0;    // links published recently, not again
  uint64_t received = 0;   // delivered to this node
  uint64_t acked = 0;
  uint64_t naked = 0;
  uint64_t bad = 0;  // undecodable messages (acked, dropped)
  uint64_t pages_queued = 0;
  uint64_t pages_published = 0;
  uint64_t pages_dropped = 0;
  uint64_t pages_replayed = 0;  // records read back acquiring shards
  uint64_t shards_replayed = 0;
  bool connected = false;
};

class WorkRouter {
 public:
  // Runs on the router's thread with each batch of deliveries.
  using DeliverFn = std::function<void(std::vector<DeliveredWork>)>;
  // Runs on the router's thread with the records of shards being acquired,
  // in batches (done = false); then once with done = true and the shards
  // whose replay is complete (every shard acquired at once, so their pages
  // and seeds arrive together).
  using ReplayFn = std::function<void(std::vector<uint32_t> shards,
                                      std::vector<PageState>, bool done)>;
  // Runs once the item is stored (OK) or when it cannot be for now
  // (Unavailable, after kPublishWaitS, or dropped); on the router's thread,
  // or on Publish's caller for a drop.
  using DoneFn = std::function<void(Status)>;

  static Result<std::unique_ptr<WorkRouter>> Create(
      const WorkRouterOptions& options, DeliverFn deliver, ReplayFn replay);
  ~WorkRouter();  // Stop()s

  void Start();
  // Stops the thread and closes the connection; deliveries not acked come
  // back to the shards' next subscribers after the ack wait. Idempotent.
  void Stop();

  // Queues `item` for `shard`. Any thread.
  void Publish(uint32_t shard, WorkItem item, DoneFn done = nullptr);
  // Queues a page's record for the page stream. Any thread.
  void PublishPage(uint32_t shard, uint64_t url_key, std::string_view url,
                   std::string_view value);
  // The shards this node consumes from now on. Any thread.
  void SetOwned(std::shared_ptr<const std::vector<bool>> owned);
  void Ack(std::vector<uint64_t> tokens);
  void Nak(std::vector<uint64_t> tokens);
  WorkRouterStats stats() const;

 private:
  struct Nats;
  struct Pending {
    uint32_t shard = 0;
    std::string data;
    DoneFn done;
    double queued_at = 0;
  };
  struct PendingPage {
    std::string subject;
    std::string data;  // url '\0' value
  };
  WorkRouter(const WorkRouterOptions& options, DeliverFn deliver,
             ReplayFn replay);
  void Replay(uint32_t shard);
  // Replays then consumes each shard newly in `owned`.
  void Acquire(const std::vector<uint32_t>& shards);
  void PublishPages();
  void Run();
  bool Connect();
  void ApplyOwned();
  void PublishSome();
  void SettleSome();
  void DeliverSome();
  friend struct WorkRouterCallbacks;  // libnats' message callback

  const WorkRouterOptions options_;
  const DeliverFn deliver_;
  const ReplayFn replay_;

  // The router's thread only.
  std::unique_ptr<Nats> nats_;
  double next_connect_ = 0;
  double publish_retry_at_ = 0;
  bool connect_failed_logged_ = false;
  std::vector<bool> subscribed_;  // by shard
  uint64_t next_token_ = 1;
  std::unordered_map<uint64_t, void*> held_;  // token -> natsMsg*

  std::atomic<bool> stop_{false};
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;                       // guarded by mu_
  size_t queue_bytes_ = 0;                          // guarded by mu_
  std::deque<PendingPage> pages_;                   // guarded by mu_
  size_t pages_bytes_ = 0;                          // guarded by mu_
  std::unordered_set<uint64_t> recent_;             // guarded by mu_
  std::shared_ptr<const std::vector<bool>> owned_;  // guarded by mu_
  bool owned_changed_ = false;                      // guarded by mu_
  std::vector<void*> incoming_;                     // natsMsg*, guarded by mu_
  std::vector<uint64_t> to_ack_, to_nak_;           // guarded by mu_
  WorkRouterStats stats_;                           // guarded by mu_
};

}  // namespace freshd::cluster

#endif  // FRESHD_CLUSTER_WORK_ROUTER_H_

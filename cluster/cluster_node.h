// ClusterNode: this daemon's membership of a cluster over NATS JetStream,
// and the shards it may fetch (cluster/README.md).
//
// Every `heartbeat` the node puts its entry (key: its name; value: JSON
// {"shards", "lambda", "rate_share", "instance"}) into the key-value bucket
// kMemberBucket, created on first use with one value per key and entries
// expiring after `ttl` (so a node joining reads only recent ones). It
// watches the bucket: a put is a heartbeat of that member, timed on this
// node's clock; a delete is a member leaving (Stop). Live members (heard
// within `ttl`) are assigned shards by rendezvous hashing
// (cluster/shard_map.h); a shard given to this node is acquired `ttl` after
// (cluster/membership.h ShardOwnership), one taken away is released at once.
// The node owns nothing while it has not heard its own heartbeat within
// `ttl` (NATS unreachable: the others are about to take its shards), while
// another process announces the same name, or while a live member uses a
// different `shards`.
//
// Threads: the node's own thread (Start to Stop) owns the NATS connection,
// the bucket, the watcher, the Membership and the ShardOwnership, and calls
// `on_change` whenever the view changes. libnats runs its own threads
// (socket reader, flusher, reconnects) that only queue messages for the
// watcher; none of our code runs on them (no libnats callbacks are set).
// view() and SetFigures() are safe from any thread.

#ifndef FRESHD_CLUSTER_CLUSTER_NODE_H_
#define FRESHD_CLUSTER_CLUSTER_NODE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cluster/membership.h"

namespace freshd::cluster {

inline constexpr char kMemberBucket[] = "freshd_members";
// How long the node's thread waits for a watcher entry at a time (so how
// soon Stop and a due heartbeat are noticed).
inline constexpr double kPollS = 0.05;

struct ClusterNodeOptions {
  std::string nats_url;  // one URL or a comma-separated list
  std::string node;      // unique in the cluster: [A-Za-z0-9_-]{1,64}
  uint32_t shards = 256;
  double heartbeat_s = 1;
  double ttl_s = 5;  // also the handoff delay; >= 2 x heartbeat_s
  std::string bucket = kMemberBucket;
};

// What the node knows, as of its last change.
struct ClusterView {
  std::string node;
  bool connected = false;           // its latest heartbeat was stored
  std::vector<MemberInfo> members;  // live, sorted by name
  // The shards this node may fetch, by shard; never null.
  std::shared_ptr<const std::vector<bool>> owned;
  size_t shards_owned = 0;
  size_t shards_pending = 0;  // given to it, acquired after the handoff
  std::string problem;        // why it owns nothing; "" otherwise
};

class ClusterNode {
 public:
  // Runs on the node's thread after each change of the view.
  using ChangeFn = std::function<void(const ClusterView&)>;

  // InvalidArgument for an empty URL, a bad node name, 0 shards, or a ttl
  // under twice the heartbeat. Connects nothing yet.
  static Result<std::unique_ptr<ClusterNode>> Create(
      const ClusterNodeOptions& options, ChangeFn on_change);
  ~ClusterNode();  // Stop()s

  // Starts the node's thread: connects (retrying every second while NATS is
  // unreachable; reconnecting after a drop), then heartbeats and watches.
  void Start();
  // Deletes this node's entry (best effort, so the others reassign its
  // shards without waiting for the ttl), then stops the thread and closes
  // the connection. Idempotent. The caller must have stopped fetching.
  void Stop();

  // The figures the next heartbeats announce. Any thread.
  void SetFigures(double lambda, double rate_share);
  // A JSON object the next heartbeats announce beside them (at most
  // kMaxSummaryBytes; longer: not announced). Any thread.
  void SetSummary(std::string summary);
  // The current view. Any thread.
  ClusterView view() const;
  const ClusterNodeOptions& options() const { return options_; }

 private:
  struct Nats;  // the libnats objects, owned by the node's thread
  ClusterNode(const ClusterNodeOptions& options, ChangeFn on_change);
  void Run();
  bool Connect(double now);
  void Heartbeat(double now);
  void Drain(double now);
  void Recompute(double now);
  void Disconnect();

  // Const after construction.
  const ClusterNodeOptions options_;
  const ChangeFn on_change_;
  const uint64_t instance_;  // tells two processes of one name apart

  // The node's thread only.
  std::unique_ptr<Nats> nats_;
  Membership membership_;
  ShardOwnership ownership_;
  double next_connect_ = 0;
  double next_heartbeat_ = 0;
  double last_stored_ = -1;     // last heartbeat the server acknowledged
  double joined_at_ = -1;       // when the current connection was made
  double self_heard_ = -1;      // our own heartbeat last seen watching
  double conflict_until_ = -1;  // another process announced our name
  bool connect_failed_logged_ = false;
  bool initial_done_ = false;  // the watcher delivered the initial values
  ClusterView published_;

  std::atomic<bool> stop_{false};
  std::thread thread_;

  mutable std::mutex mu_;
  ClusterView view_;       // guarded by mu_
  double lambda_ = -1;     // guarded by mu_
  double rate_share_ = 0;  // guarded by mu_
  std::string summary_;    // guarded by mu_
};

// The JSON value of a heartbeat, and back (false for a value that is not
// one: the entry is ignored).
inline constexpr size_t kMaxSummaryBytes = 512;
std::string EncodeMember(const MemberInfo& info, uint64_t instance);
bool DecodeMember(std::string_view key, std::string_view value,
                  MemberInfo* info, uint64_t* instance);

}  // namespace freshd::cluster

#endif  // FRESHD_CLUSTER_CLUSTER_NODE_H_

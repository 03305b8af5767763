// ClusterAdapter: the engine as one node of a cluster ([cluster] nats_url;
// cluster/README.md). It owns the cluster's parts and the state that ties
// them to the engine:
//   * the node (cluster/cluster_node.h): membership and shard ownership;
//     OwnsHost says whether a host's shard is owned here and its pages were
//     replayed, so the dispatcher and the robots refresh only touch those;
//   * the work router (cluster/work_router.h): links, sitemap entries,
//     hints and seeds of other nodes' shards go to their owners
//     (RouteAway); work delivered for ours is applied as if found here and
//     acked once committed (OnWork); each committed page record goes to the
//     page stream (PublishPages), from which a shard acquired is rebuilt
//     before its hosts are fetched (OnReplay), with the seeds kept for it;
//   * the budget share: λ (sched::LambdaMeter over the scheduler's marginal
//     selections, windows of kLambdaWindow) and this node's share of
//     [budget] rate (sched::NextRateShares over the members' heartbeats);
//   * the change stream's publisher (cluster/change_publisher.h, when the
//     feed is on): each committed feed event (PublishChanges), backfilled
//     from the store;
//   * /status "cluster" (ClusterJson), its /metrics (AppendMetrics) and the
//     summary its heartbeats announce.
// It reaches the engine only through what it is given: the page book and
// frontier (pointers to lower parts), the scheduler (read), the store (the
// feed, thread-safe) and Hooks.
//
// Threads. Owner: the scheduler's thread (the io_context given to Create);
// every method runs there except PublishPages and PublishChanges, which run
// on the writer thread and touch only the router and publisher (both
// thread-safe) and constants. The node's thread (view changes), the
// router's threads (delivered work, replayed pages, the stored-or-not
// report of a routed item) never call in: each callback posts a copy of
// its arguments to the owner thread, guarded by a liveness flag that the
// destructor clears, so nothing runs on a destroyed adapter.

#ifndef FRESHD_DAEMON_CLUSTER_ADAPTER_H_
#define FRESHD_DAEMON_CLUSTER_ADAPTER_H_

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "cluster/change_publisher.h"
#include "cluster/cluster_node.h"
#include "cluster/work_router.h"
#include "conf/config.h"
#include "daemon/frontier.h"
#include "daemon/page_book.h"
#include "daemon/store_writer.h"
#include "sched/rate_shares.h"
#include "sched/scheduler.h"
#include "store/page_store.h"

namespace freshd::daemon {

// The λ this node publishes is the mean of this many marginal selections
// (or more, between heartbeats); fewer is too noisy to steer the budget by.
inline constexpr uint64_t kLambdaWindow = 10;

// Waits for the routed items of one POST /signal to be stored: each
// Arrive()s once (on the scheduler's thread); Then() runs `done` with the
// first error, or OK, once all have. Scheduler's thread only.
struct RouteJoin {
  size_t pending = 0;
  Status status;
  std::vector<std::function<void(Status)>> waiters;
  void Arrive(Status s);
  void Then(std::function<void(Status)> done);
};

class ClusterAdapter {
 public:
  struct Options {
    ClusterConfig cluster;      // [cluster]; nats_url set
    bool changes = false;       // [feed] enabled: publish the change stream
    uint64_t max_seeds = 0;     // [crawler] max_urls: seeds kept
    uint32_t max_per_host = 0;  // [crawler] max_urls_per_host (adopted pages)
  };
  // What the adapter asks of the engine; all on the scheduler's thread.
  struct Hooks {
    // The id of `url` (normalized), added now when new and in scope
    // (Frontier::AddUrl at now).
    std::function<std::optional<sched::PageId>(const std::string& url,
                                               double importance, bool seed)>
        add_url;
    // A dated entry of a known page routed here (SignalIntake::
    // ConsiderDatedSignal), and a pushed hint (SignalIntake::SignalPage),
    // each with the source the sender named (else the kind's own: a
    // sitemap, a /signal hint).
    std::function<void(sched::PageId, double lastmod, double now,
                       sched::SignalSource)>
        sitemap_signal;
    std::function<void(sched::PageId, double now, double changed_at,
                       sched::SignalSource)>
        pushed_signal;
    // A group commit; `committed` (may be null) once it is durable.
    std::function<void(std::function<void(Status)> committed)> commit;
    std::function<void()> dispatch;  // something may be fetched now
    // This node's rate changed (Scheduler::SetRate at now).
    std::function<void(double pages_per_second)> set_rate;
    std::function<double()> budget;  // [budget] rate in force
    // For the heartbeat's summary: pages fetched, and the fetch rate of the
    // last minute (null when unknown).
    std::function<uint64_t()> pages_fetched;
    std::function<nlohmann::json()> fetch_rate;
  };

  // Creates the node, the router and (with `changes`) the publisher, not
  // started. InvalidArgument for an unusable node name; the parts' errors.
  static Result<std::unique_ptr<ClusterAdapter>> Create(
      boost::asio::io_context& io, Options options, PageBook* book,
      Frontier* frontier, const sched::Scheduler* sched,
      store::PageStore* store, Hooks hooks);
  ~ClusterAdapter();
  ClusterAdapter(const ClusterAdapter&) = delete;
  ClusterAdapter& operator=(const ClusterAdapter&) = delete;

  void Start();
  // From now on delivered work is handed back (naked) to the stream.
  void BeginStop() { stopping_ = true; }
  // Leaves the cluster: the router, then the node (others take our shards
  // after their handoff delay). StopAll also stops the publisher (call it
  // after the writer's last commit, so the last events are published).
  void StopMembership();
  void StopAll();

  // Keeps a seed given to this node (bounded by max_seeds): added when its
  // shard is acquired.
  void KeepSeed(const std::string& url, double weight);
  // `url`'s host in a shard this node does not own: publishes it to the
  // owner through the work stream (link and sitemap entries only when in
  // scope) and returns true; false: this node handles it. A `join` learns
  // when the item is stored. A sitemap entry or a signal carries `source`
  // (WorkItem::source) when it is not the kind's own (kSitemapLastmod,
  // kPushedHint), so the owner learns each source apart.
  bool RouteAway(const std::string& url, cluster::WorkItem::Kind kind,
                 double value, std::shared_ptr<RouteJoin> join = {},
                 std::optional<sched::SignalSource> source = std::nullopt);
  // Whether the cluster gives `host`'s shard to another live node now:
  // false before this node's view is sound (no view yet, its own heartbeat
  // not heard, a conflict: nothing is known) and while the shard is ours
  // or on its way to us (given, the handoff pending). What a WebSub
  // subscription follows: a node starting or cut off keeps its own, one
  // whose shard moved lets them go.
  bool HostOwnedElsewhere(sched::HostId host);
  // Whether `host`'s shard is owned now and its pages were replayed.
  bool OwnsHost(sched::HostId host);
  // The budget this node crawls at: its share of [budget] rate (equal
  // shares before the first step; the whole rate before the first view).
  double RateShare() const;
  // Housekeeping: λ, the share and the summary to the node's heartbeat. A
  // share of 0 (stepped while this node had no pages) becomes an equal one
  // once it has pages again.
  void Tick();

  // Writer thread, after the LevelDB commit.
  void PublishPages(const std::vector<CommittedPage>& pages);
  void PublishChanges(const std::vector<store::FeedEvent>& events);
  bool publishes_changes() const { return changes_ != nullptr; }

  // /status "cluster".
  nlohmann::json ClusterJson() const;
  // The /metrics families of a /status JSON's "cluster" (nothing when it
  // is null): gauges, the work stream's counters, the change stream's.
  static void AppendMetrics(const nlohmann::json& status, std::string* out);

  // The owner thread's handlers of the node's and the router's callbacks
  // (posted there); public so a test can drive them.
  void OnClusterView(cluster::ClusterView view);
  void OnWork(std::vector<cluster::DeliveredWork> batch);
  void OnReplay(const std::vector<uint32_t>& shards,
                const std::vector<cluster::PageState>& pages, bool done);

 private:
  ClusterAdapter(boost::asio::io_context& io, Options options, PageBook* book,
                 Frontier* frontier, const sched::Scheduler* sched,
                 store::PageStore* store, Hooks hooks);
  Status Init();
  Status InitChangePublisher();
  // A step of the share when the members change or the λ window is new
  // (stepping again on the same λ would compound the same correction).
  void StepShare();
  double Lambda();
  uint32_t ShardOfHost(sched::HostId host);
  std::string Summary() const;
  nlohmann::json ChangesJson() const;
  uint32_t shards() const {
    return static_cast<uint32_t>(options_.cluster.shards);
  }

  boost::asio::io_context& io_;
  const Options options_;
  PageBook* const book_;
  Frontier* const frontier_;
  const sched::Scheduler* const sched_;
  store::PageStore* const store_;
  const Hooks hooks_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool stopping_ = false;

  std::unique_ptr<cluster::ClusterNode> node_;
  std::unique_ptr<cluster::WorkRouter> router_;
  std::unique_ptr<cluster::ChangePublisher> changes_;  // null: feed off
  std::vector<std::pair<std::string, double>> seeds_;
  uint64_t routed_total_ = 0;         // items published for other shards
  uint64_t work_applied_total_ = 0;   // delivered items applied here
  uint64_t pages_adopted_total_ = 0;  // pages rebuilt from the page stream
  std::optional<cluster::ClusterView> view_;
  // This node's share as a fraction of [budget] rate (so a budget change
  // scales it); < 0: none yet, an equal split. The λ window and the
  // members it last stepped with.
  double share_fraction_ = -1;
  uint64_t share_stepped_window_ = 0;
  std::vector<std::string> share_members_;
  sched::LambdaMeter lambda_meter_{kLambdaWindow};
  std::vector<int32_t> host_shard_;  // by host id; -1: not computed yet
  // By shard: the view's live members give it to another node (all false
  // while the view is not sound).
  std::vector<bool> elsewhere_;
  // By shard: its pages were replayed since it was last acquired (its
  // hosts are fetched only then).
  std::vector<bool> replayed_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_CLUSTER_ADAPTER_H_

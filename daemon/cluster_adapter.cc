#include "daemon/cluster_adapter.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstdio>

#include "base/clock.h"
#include "cluster/shard_map.h"
#include "daemon/change_feed.h"
#include "parse/url.h"
#include "store/records.h"

namespace freshd::daemon {
namespace {

// The host name as a node name: its first label, with any character a node
// name may not have as '-' (cluster/cluster_node.h).
std::string HostNodeName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  std::string name(buf);
  name = name.substr(0, name.find('.'));
  for (char& ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
    if (!ok) ch = '-';
  }
  return name.substr(0, 64);
}

// The change stream's families (/status "cluster"."changes").
void AppendChangesMetrics(const nlohmann::json& status, std::string* out) {
  const nlohmann::json& c = status["cluster"];
  if (!c.is_object() || !c["changes"].is_object()) return;
  const nlohmann::json& ch = c["changes"];
  static constexpr const char* kMetrics[][4] = {
      {"freshd_cluster_changes_queued", "gauge", "queued",
       "Change events waiting to be published to the change stream."},
      {"freshd_cluster_changes_published_total", "counter", "published",
       "Change events stored in the change stream."},
      {"freshd_cluster_changes_dropped_total", "counter", "dropped",
       "Change events dropped from the full publish queue (oldest first)."},
      {"freshd_cluster_changes_skipped_total", "counter", "skipped",
       "Change events not published again: the stream had them."},
      {"freshd_cluster_changes_backfilled_total", "counter", "backfilled",
       "Change events published from the local feed (not queued)."},
      {"freshd_cluster_changes_lost_total", "counter", "lost",
       "Change events gone from the local feed before they were published."},
      {"freshd_cluster_changes_reordered_total", "counter", "reordered",
       "Change events stored after a later one (refused, then stored)."},
  };
  for (const auto& m : kMetrics) {
    char line[400];
    std::snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n",
                  m[0], m[3], m[0], m[1], m[0], ch[m[2]].get<double>());
    *out += line;
  }
}

// The source a routed item of `kind` has when it names none.
sched::SignalSource DefaultSource(cluster::WorkItem::Kind kind) {
  return kind == cluster::WorkItem::Kind::kSitemap
             ? sched::SignalSource::kSitemapLastmod
             : sched::SignalSource::kPushedHint;
}

// The source a routed item names (an unknown name, or none: its kind's).
sched::SignalSource SourceOf(const cluster::WorkItem& item) {
  for (int i = 0; i < sched::kSignalSources; ++i) {
    const auto source = static_cast<sched::SignalSource>(i);
    if (item.source == sched::SignalSourceName(source)) return source;
  }
  return DefaultSource(item.kind);
}

}  // namespace

ClusterAdapter::ClusterAdapter(boost::asio::io_context& io, Options options,
                               PageBook* book, Frontier* frontier,
                               const sched::Scheduler* sched,
                               store::PageStore* store, Hooks hooks)
    : io_(io),
      options_(std::move(options)),
      book_(book),
      frontier_(frontier),
      sched_(sched),
      store_(store),
      hooks_(std::move(hooks)) {}

ClusterAdapter::~ClusterAdapter() {
  *alive_ = false;
  StopMembership();
}

Result<std::unique_ptr<ClusterAdapter>> ClusterAdapter::Create(
    boost::asio::io_context& io, Options options, PageBook* book,
    Frontier* frontier, const sched::Scheduler* sched, store::PageStore* store,
    Hooks hooks) {
  std::unique_ptr<ClusterAdapter> adapter(new ClusterAdapter(
      io, std::move(options), book, frontier, sched, store, std::move(hooks)));
  if (Status s = adapter->Init(); !s.ok()) return s;
  if (Status s = adapter->InitChangePublisher(); !s.ok()) return s;
  return adapter;
}

Status ClusterAdapter::Init() {
  cluster::ClusterNodeOptions o;
  const ClusterConfig& c = options_.cluster;
  o.nats_url = c.nats_url;
  o.node = c.node.empty() ? HostNodeName() : c.node;
  o.shards = shards();
  o.heartbeat_s = c.heartbeat_s;
  o.ttl_s = c.ttl_s;
  auto node = cluster::ClusterNode::Create(
      o, [this, alive = alive_](const cluster::ClusterView& view) {
        // On the node's thread: hand the view to the scheduler's thread.
        boost::asio::post(io_, [this, alive, view] {
          if (*alive) OnClusterView(view);
        });
      });
  if (!node.ok()) return node.status();
  node_ = std::move(node).value();
  cluster::WorkRouterOptions w;
  w.nats_url = o.nats_url;
  w.node = o.node;
  w.shards = o.shards;
  auto router = cluster::WorkRouter::Create(
      w,
      [this, alive = alive_](std::vector<cluster::DeliveredWork> batch) {
        // On the router's thread: hand the work to the scheduler's thread.
        boost::asio::post(io_, [this, alive, batch = std::move(batch)] {
          if (*alive) OnWork(std::move(batch));
        });
      },
      [this, alive = alive_](std::vector<uint32_t> shards,
                             std::vector<cluster::PageState> pages, bool done) {
        boost::asio::post(io_, [this, alive, shards = std::move(shards), done,
                                pages = std::move(pages)] {
          if (*alive) OnReplay(shards, pages, done);
        });
      });
  if (!router.ok()) return router.status();
  router_ = std::move(router).value();
  return Status::OK();
}

void ClusterAdapter::Start() {
  node_->Start();
  router_->Start();
  if (changes_) changes_->Start();
}

void ClusterAdapter::StopMembership() {
  if (router_) router_->Stop();
  if (node_) node_->Stop();
}

void ClusterAdapter::StopAll() {
  if (router_) router_->Stop();
  if (changes_) changes_->Stop();
  if (node_) node_->Stop();
}

void ClusterAdapter::KeepSeed(const std::string& url, double weight) {
  if (seeds_.size() < options_.max_seeds) seeds_.emplace_back(url, weight);
}

void ClusterAdapter::Tick() {
  const double lambda = Lambda();
  // A share of nothing was stepped while this node had no pages (λ = 0:
  // a node joining before its shards are replayed); with pages again it
  // takes an equal share until the next step, rather than wait for a view
  // change with a budget of 0 (it could not select enough pages to measure
  // a λ that would raise it).
  if (view_ && share_fraction_ == 0 && lambda != 0) {
    share_fraction_ = -1;
    hooks_.set_rate(RateShare());
  }
  node_->SetFigures(lambda, RateShare());
  node_->SetSummary(Summary());
}

void ClusterAdapter::PublishPages(const std::vector<CommittedPage>& pages) {
  // On the writer thread, after the LevelDB commit.
  const uint32_t shards = this->shards();
  for (const CommittedPage& p : pages) {
    router_->PublishPage(cluster::ShardOf(parse::UrlAuthority(p.url), shards),
                         p.url_key, p.url, p.value);
  }
}

void ClusterAdapter::OnReplay(const std::vector<uint32_t>& shards,
                              const std::vector<cluster::PageState>& pages,
                              bool done) {
  const uint32_t max_per_host = options_.max_per_host;
  size_t adopted = 0;
  for (const cluster::PageState& p : pages) {
    if (book_->Find(p.url)) continue;  // ours already: the local copy wins
    // An empty value is a tombstone: the page was removed for good by its
    // shard's owner (daemon/page_book.h "Removal"), its last message in
    // the compacted stream says so, and nothing is adopted.
    if (p.value.empty()) continue;
    store::PageRecord record;
    if (!store::DecodePageValue(p.value, &record).ok()) continue;
    record.url = p.url;
    auto host = book_->InternHost(parse::UrlAuthority(p.url));
    if (!host.ok()) continue;
    auto id = book_->Adopt(record, host.value(), max_per_host);
    if (id.ok()) {
      frontier_->ApplyRule(id.value());  // [[rule]]
      ++adopted;
    }
  }
  pages_adopted_total_ += adopted;
  if (done) {
    // The shards' seeds join too (every node keeps every seed it was
    // given; the shards' previous owner may be gone), and their hosts are
    // fetched from now on.
    const uint32_t n = this->shards();
    if (replayed_.size() != n) replayed_.assign(n, false);
    for (uint32_t s : shards) replayed_[s] = true;
    for (const auto& [url, weight] : seeds_) {
      if (replayed_[cluster::ShardOf(parse::UrlAuthority(url), n)] &&
          !book_->Find(url)) {
        hooks_.add_url(url, weight, true);
      }
    }
  }
  if (adopted > 0 || done) hooks_.commit(nullptr);
  hooks_.dispatch();
}

void RouteJoin::Arrive(Status s) {
  if (status.ok() && !s.ok()) status = s;
  if (pending > 0 && --pending == 0) {
    auto w = std::move(waiters);
    for (auto& fn : w) fn(status);
  }
}

void RouteJoin::Then(std::function<void(Status)> done) {
  if (pending == 0) return done(status);
  waiters.push_back(std::move(done));
}

bool ClusterAdapter::RouteAway(const std::string& url,
                               cluster::WorkItem::Kind kind, double value,
                               std::shared_ptr<RouteJoin> join,
                               std::optional<sched::SignalSource> source) {
  if (!router_) return false;
  const uint32_t shard = cluster::ShardOf(parse::UrlAuthority(url), shards());
  if (view_ && (*view_->owned)[shard]) return false;
  if ((kind == cluster::WorkItem::Kind::kLink ||
       kind == cluster::WorkItem::Kind::kSitemap) &&
      !frontier_->InScope(url)) {
    return false;  // AddUrl turns it away
  }
  ++routed_total_;
  cluster::WorkRouter::DoneFn done;
  if (join) {
    ++join->pending;
    done = [this, join, alive = alive_](Status s) {
      boost::asio::post(io_, [join, alive, s] {
        if (*alive) join->Arrive(s);
      });
    };
  }
  cluster::WorkItem item{kind, url, value, {}};
  if (source && *source != DefaultSource(kind)) {
    item.source = sched::SignalSourceName(*source);
  }
  router_->Publish(shard, std::move(item), std::move(done));
  return true;
}

void ClusterAdapter::OnWork(std::vector<cluster::DeliveredWork> batch) {
  const double now = UnixNow();
  std::vector<uint64_t> applied, not_ours;
  for (cluster::DeliveredWork& d : batch) {
    // Ownership may have moved since the router took it: back to the stream
    // at once, for the shard's new owner.
    if (stopping_ || !view_ || !(*view_->owned)[d.shard]) {
      not_ours.push_back(d.token);
      continue;
    }
    applied.push_back(d.token);
    const std::string& url = d.item.url;
    switch (d.item.kind) {
      case cluster::WorkItem::Kind::kLink:
        hooks_.add_url(url, d.item.value, false);
        break;
      case cluster::WorkItem::Kind::kSeed:
        frontier_->AddScope(url);
        hooks_.add_url(url, d.item.value, true);
        break;
      case cluster::WorkItem::Kind::kSitemap: {
        const bool known = book_->Find(url).has_value();
        std::optional<sched::PageId> page = hooks_.add_url(url, 1.0, false);
        if (page && known && d.item.value > 0) {
          hooks_.sitemap_signal(*page, d.item.value, now, SourceOf(d.item));
        }
        break;
      }
      case cluster::WorkItem::Kind::kSignal:
        if (auto page = book_->Find(url)) {
          hooks_.pushed_signal(*page, now, d.item.value, SourceOf(d.item));
        } else {
          hooks_.add_url(url, 1.0, false);
        }
        break;
    }
  }
  work_applied_total_ += applied.size();
  if (!not_ours.empty()) router_->Nak(std::move(not_ours));
  if (applied.empty()) return;
  // Acked once durable here: a crash before the commit gets them again.
  hooks_.commit(
      [this, applied = std::move(applied), alive = alive_](Status s) mutable {
        if (!*alive || !router_) return;
        if (s.ok()) {
          router_->Ack(std::move(applied));
        } else {
          router_->Nak(std::move(applied));
        }
      });
  hooks_.dispatch();
}

void ClusterAdapter::OnClusterView(cluster::ClusterView view) {
  const size_t nodes_before = view_ ? view_->members.size() : 0;
  view_ = std::move(view);
  // A shard released is replayed again when next acquired.
  for (size_t s = 0; s < replayed_.size(); ++s) {
    if (!(*view_->owned)[s]) replayed_[s] = false;
  }
  // Which shards the live members give to another node: only a sound view
  // (this node among them, no problem) says.
  elsewhere_.assign(shards(), false);
  if (view_->problem.empty()) {
    std::vector<std::string> names;
    for (const cluster::MemberInfo& m : view_->members) names.push_back(m.node);
    const std::vector<bool> ours =
        cluster::OwnedShards(node_->options().node, names, shards());
    const bool listed = std::find(names.begin(), names.end(),
                                  node_->options().node) != names.end();
    for (uint32_t s = 0; listed && s < shards(); ++s) elsewhere_[s] = !ours[s];
  }
  // After the view: work the router delivers for a shard finds it owned.
  if (router_) router_->SetOwned(view_->owned);
  const double before = RateShare();
  StepShare();
  if (view_->members.size() != nodes_before || RateShare() != before) {
    hooks_.set_rate(RateShare());
  }
  node_->SetFigures(Lambda(), RateShare());
  hooks_.dispatch();
}

void ClusterAdapter::StepShare() {
  const std::vector<cluster::MemberInfo>& members = view_->members;
  const std::string& self = node_->options().node;
  std::vector<std::string> names;
  std::vector<sched::ShareMember> in;
  size_t me = members.size();
  for (const cluster::MemberInfo& m : members) {
    if (m.node == self) me = in.size();
    names.push_back(m.node);
    in.push_back({m.node, m.lambda, m.rate_share});
  }
  if (me == members.size()) {  // our own heartbeat not heard: equal split
    share_fraction_ = -1;
    share_members_.clear();
    return;
  }
  const uint64_t window = lambda_meter_.windows();
  if (share_fraction_ >= 0 && names == share_members_ &&
      window == share_stepped_window_) {
    return;
  }
  const double rate = hooks_.budget();
  const std::vector<double> next = sched::NextRateShares(in, rate);
  share_fraction_ = rate > 0 ? next[me] / rate : -1;
  share_stepped_window_ = window;
  share_members_ = std::move(names);
}

double ClusterAdapter::Lambda() {
  return lambda_meter_.Update(sched_->size(), sched_->marginal_sum(),
                              sched_->marginal_count());
}

uint32_t ClusterAdapter::ShardOfHost(sched::HostId host) {
  if (host_shard_.size() <= host) {
    host_shard_.resize(std::max<size_t>(host + 1, book_->hosts().size()), -1);
  }
  if (host_shard_[host] < 0) {
    host_shard_[host] = static_cast<int32_t>(
        cluster::ShardOf(book_->hosts().Name(host), shards()));
  }
  return static_cast<uint32_t>(host_shard_[host]);
}

bool ClusterAdapter::OwnsHost(sched::HostId host) {
  if (!view_) return false;
  // Owned, and its pages rebuilt from the page stream.
  const size_t s = ShardOfHost(host);
  return (*view_->owned)[s] && s < replayed_.size() && replayed_[s];
}

bool ClusterAdapter::HostOwnedElsewhere(sched::HostId host) {
  if (!view_) return false;
  const size_t s = ShardOfHost(host);
  return s < elsewhere_.size() && elsewhere_[s] && !(*view_->owned)[s];
}

double ClusterAdapter::RateShare() const {
  const double rate = hooks_.budget();
  if (share_fraction_ >= 0) return share_fraction_ * rate;
  // Before the first step, equal shares; before the first view, the whole
  // rate (nothing is owned yet).
  const size_t nodes = view_ ? view_->members.size() : 0;
  return rate / static_cast<double>(std::max<size_t>(1, nodes));
}

nlohmann::json ClusterAdapter::ClusterJson() const {
  nlohmann::json members = nlohmann::json::array();
  size_t owned = 0, pending = 0;
  std::string ranges;
  bool connected = false;
  std::string problem = "not connected yet";
  if (view_) {
    for (const auto& m : view_->members) members.push_back(m.node);
    owned = view_->shards_owned;
    ranges = cluster::FormatShardRanges(*view_->owned);
    pending = view_->shards_pending;
    connected = view_->connected;
    problem = view_->problem;
  }
  const double lambda = lambda_meter_.lambda();
  nlohmann::json work = nullptr;
  if (router_) {
    const cluster::WorkRouterStats w = router_->stats();
    work = {{"routed", routed_total_},
            {"queued", w.queued},
            {"published", w.published},
            {"dropped", w.dropped},
            {"deduped", w.deduped},
            {"received", w.received},
            {"applied", work_applied_total_},
            {"acked", w.acked},
            {"naked", w.naked},
            {"bad", w.bad},
            {"pages_queued", w.pages_queued},
            {"pages_published", w.pages_published},
            {"pages_dropped", w.pages_dropped},
            {"pages_replayed", w.pages_replayed},
            {"shards_replayed", w.shards_replayed},
            {"pages_adopted", pages_adopted_total_},
            {"connected", w.connected}};
  }
  return {
      {"node", node_->options().node},
      {"nodes", members.size()},
      {"members", members},
      {"shards", options_.cluster.shards},
      {"shards_owned", owned},
      {"shards_pending", pending},
      {"owned", ranges},  // the shards owned, e.g. "0-3,7,9-12"
      // The threshold λ this node publishes: the mean value of its
      // marginal selections over the last window (sched::LambdaMeter);
      // null before the first, 0 with no pages.
      {"lambda", lambda > 0 ? nlohmann::json(lambda) : nlohmann::json()},
      {"rate_share", RateShare()},
      {"connected", connected},
      {"problem", problem.empty() ? nlohmann::json() : nlohmann::json(problem)},
      // The work stream (cluster/work_router.h): items for other nodes'
      // shards routed, queued while NATS is away (at most
      // kPublishQueueItems, then the oldest dropped), and received.
      {"work", work},
      // The change stream (PublishChanges).
      {"changes", ChangesJson()},
  };
}

void ClusterAdapter::AppendMetrics(const nlohmann::json& status,
                                   std::string* out) {
  const nlohmann::json& c = status["cluster"];
  if (!c.is_object()) return;
  auto gauge = [&](const char* name, const char* help, double value) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "# HELP %s %s\n# TYPE %s gauge\n%s %.17g\n", name, help, name,
                  name, value);
    *out += line;
  };
  gauge("freshd_cluster_nodes", "Live nodes of the cluster, as seen here.",
        c["nodes"].get<double>());
  gauge("freshd_cluster_shards_owned", "Shards this node fetches.",
        c["shards_owned"].get<double>());
  gauge("freshd_cluster_shards_pending",
        "Shards given to this node, fetched after the handoff delay.",
        c["shards_pending"].get<double>());
  if (c["lambda"].is_number()) {  // none before the first selections
    gauge("freshd_cluster_lambda",
          "This node's threshold: the value of its recent selections.",
          c["lambda"].get<double>());
  }
  gauge("freshd_cluster_rate_share",
        "Pages per second this node crawls at (its share of the budget).",
        c["rate_share"].get<double>());
  gauge("freshd_cluster_connected",
        "1 while this node's heartbeats are stored, else 0.",
        c["connected"].get<bool>() ? 1 : 0);
  const nlohmann::json& w = c["work"];
  if (w.is_object()) {
    gauge("freshd_cluster_work_queued",
          "Routed items waiting to be published to the work stream.",
          w["queued"].get<double>());
    // Counters, from the work stream and the page stream.
    static constexpr const char* kCounters[][3] = {
        {"freshd_cluster_work_routed_total", "routed",
         "Items for other nodes' shards handed to the work stream."},
        {"freshd_cluster_work_dropped_total", "dropped",
         "Routed items dropped from the full publish queue (oldest first)."},
        {"freshd_cluster_work_received_total", "received",
         "Work stream items delivered to this node for its shards."},
        {"freshd_cluster_pages_published_total", "pages_published",
         "Page records stored in the page stream."},
        {"freshd_cluster_pages_dropped_total", "pages_dropped",
         "Page records dropped from the full publish queue (oldest first)."},
        {"freshd_cluster_pages_adopted_total", "pages_adopted",
         "Pages rebuilt from the page stream when acquiring shards."},
    };
    for (const auto& [name, key, help] : kCounters) {
      char line[320];
      std::snprintf(line, sizeof line,
                    "# HELP %s %s\n# TYPE %s counter\n%s %.17g\n", name, help,
                    name, name, w[key].get<double>());
      *out += line;
    }
  }
  *out +=
      "# HELP freshd_cluster_info This node's name.\n"
      "# TYPE freshd_cluster_info gauge\nfreshd_cluster_info{node=\"" +
      c["node"].get<std::string>() + "\"} 1\n";
  AppendChangesMetrics(status, out);
}

Status ClusterAdapter::InitChangePublisher() {
  if (!options_.changes) return Status::OK();
  cluster::ChangePublisherOptions o;
  o.nats_url = options_.cluster.nats_url;
  o.node = node_->options().node;
  o.max_age_s = options_.cluster.changes_max_age_s;
  o.max_bytes = options_.cluster.changes_max_bytes;
  o.local_newest = store_->feed_bounds().newest;
  // Events not queued (dropped while NATS was away, or committed before a
  // crash) are read back from the local feed; PageStore is thread-safe.
  o.backfill = [store = store_, node = o.node](
                   uint64_t after, uint64_t before, size_t limit,
                   std::vector<cluster::ChangeEvent>* out) {
    return store->ForEachFeedEvent(
        after, limit, [&](const store::FeedEvent& e) {
          if (e.seq >= before) return false;
          out->push_back({e.seq, ClusterEventJson(node, e)});
          return true;
        });
  };
  auto publisher = cluster::ChangePublisher::Create(o);
  if (!publisher.ok()) return publisher.status();
  changes_ = std::move(publisher).value();
  return Status::OK();
}

void ClusterAdapter::PublishChanges(
    const std::vector<store::FeedEvent>& events) {
  // On the writer thread, after the LevelDB commit, in seq order.
  for (const store::FeedEvent& e : events) {
    changes_->Publish(e.seq, ClusterEventJson(changes_->options().node, e));
  }
}

std::string ClusterAdapter::Summary() const {
  nlohmann::json rate = hooks_.fetch_rate ? hooks_.fetch_rate() : nullptr;
  return nlohmann::json{
      {"pages_known", book_->size()},
      {"pages_fetched", hooks_.pages_fetched()},
      {"fetch_rate", rate},  // pages per second over the last minute
      {"changes", store_->feed_bounds().newest},  // its feed's newest seq
      {"shards_owned", view_ ? view_->shards_owned : 0}}
      .dump();
}

nlohmann::json ClusterAdapter::ChangesJson() const {
  if (!changes_) return nullptr;
  const cluster::ChangePublisherStats c = changes_->stats();
  return {{"queued", c.queued},     {"published", c.published},
          {"dropped", c.dropped},   {"skipped", c.skipped},
          {"bad", c.bad},           {"backfilled", c.backfilled},
          {"lost", c.lost},         {"reordered", c.reordered},
          {"last_seq", c.last_seq}, {"connected", c.connected}};
}

}  // namespace freshd::daemon

// CrawlLoop as one node of a cluster: its change-feed events also go to the
// cluster's change stream (cluster/change_publisher.h; cluster/README.md
// "Change feed"), and the summary its heartbeats announce. Nothing here
// runs without [cluster] nats_url (the publisher: and the feed on).

#include <cstdio>

#include "daemon/change_feed.h"
#include "daemon/crawl_loop.h"

namespace freshd::daemon {

Status CrawlLoop::InitChangePublisher() {
  if (!cluster_ || !config_.feed.enabled) return Status::OK();
  cluster::ChangePublisherOptions o;
  o.nats_url = config_.cluster.nats_url;
  o.node = cluster_->options().node;
  o.max_age_s = config_.cluster.changes_max_age_s;
  o.max_bytes = config_.cluster.changes_max_bytes;
  o.local_newest = store_->feed_bounds().newest;
  // Events not queued (dropped while NATS was away, or committed before a
  // crash) are read back from the local feed; PageStore is thread-safe.
  o.backfill = [store = store_.get(), node = o.node](
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

void CrawlLoop::PublishChanges(const std::vector<store::FeedEvent>& events) {
  // On the writer thread, after the LevelDB commit, in seq order.
  for (const store::FeedEvent& e : events) {
    changes_->Publish(e.seq, ClusterEventJson(changes_->options().node, e));
  }
}

std::string CrawlLoop::ClusterSummary() const {
  std::shared_ptr<const nlohmann::json> snapshot = views_->snapshot();
  nlohmann::json rate = nullptr;
  if (snapshot && (*snapshot)["rate_actual"].is_number()) {
    rate = (*snapshot)["rate_actual"];
  }
  return nlohmann::json{
      {"pages_known", book_->size()},
      {"pages_fetched", observer_->fetched_total()},
      {"fetch_rate", rate},  // pages per second over the last minute
      {"changes", store_->feed_bounds().newest},  // its feed's newest seq
      {"shards_owned", cluster_view_ ? cluster_view_->shards_owned : 0}}
      .dump();
}

nlohmann::json CrawlLoop::ChangesJson() const {
  if (!changes_) return nullptr;
  const cluster::ChangePublisherStats c = changes_->stats();
  return {{"queued", c.queued},     {"published", c.published},
          {"dropped", c.dropped},   {"skipped", c.skipped},
          {"bad", c.bad},           {"backfilled", c.backfilled},
          {"lost", c.lost},         {"reordered", c.reordered},
          {"last_seq", c.last_seq}, {"connected", c.connected}};
}

void CrawlLoop::AppendChangesMetrics(const nlohmann::json& status,
                                     std::string* out) const {
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

}  // namespace freshd::daemon

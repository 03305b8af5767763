// CrawlLoop as one node of a cluster (crawl_loop.h; cluster/README.md):
// the node's creation, ownership of hosts, the budget share, and the
// "cluster" views of /status and /metrics. Nothing here runs without
// [cluster] nats_url.

#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cstdio>

#include "base/clock.h"
#include "cluster/shard_map.h"
#include "daemon/crawl_loop.h"
#include "spdlog/spdlog.h"

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

}  // namespace

Status CrawlLoop::InitCluster() {
  if (config_.cluster.nats_url.empty()) return Status::OK();
  cluster::ClusterNodeOptions o;
  o.nats_url = config_.cluster.nats_url;
  o.node = config_.cluster.node.empty() ? HostNodeName() : config_.cluster.node;
  o.shards = static_cast<uint32_t>(config_.cluster.shards);
  o.heartbeat_s = config_.cluster.heartbeat_s;
  o.ttl_s = config_.cluster.ttl_s;
  auto node = cluster::ClusterNode::Create(
      o, [this, alive = alive_](const cluster::ClusterView& view) {
        // On the node's thread: hand the view to the scheduler's thread.
        boost::asio::post(io_, [this, alive, view] {
          if (*alive) OnClusterView(view);
        });
      });
  if (!node.ok()) return node.status();
  cluster_ = std::move(node).value();
  return Status::OK();
}

void CrawlLoop::OnClusterView(cluster::ClusterView view) {
  const size_t nodes_before = cluster_view_ ? cluster_view_->members.size() : 0;
  cluster_view_ = std::move(view);
  if (cluster_view_->members.size() != nodes_before) {
    sched_->SetRate(RateShare(), UnixNow());
  }
  cluster_->SetFigures(sched_->threshold(), RateShare());
  TryDispatch();
}

bool CrawlLoop::OwnsHost(sched::HostId host) {
  if (!cluster_) return true;
  if (!cluster_view_) return false;
  if (host_shard_.size() <= host) {
    host_shard_.resize(std::max<size_t>(host + 1, book_->hosts().size()), -1);
  }
  if (host_shard_[host] < 0) {
    host_shard_[host] = static_cast<int32_t>(
        cluster::ShardOf(book_->hosts().Name(host),
                         static_cast<uint32_t>(config_.cluster.shards)));
  }
  return (*cluster_view_->owned)[host_shard_[host]];
}

double CrawlLoop::RateShare() const {
  if (!cluster_) return config_.budget.rate;
  // Equal shares for now (the λ exchange of issue #30 item 4 is to come);
  // before the first view, the whole rate (nothing is owned yet).
  const size_t nodes = cluster_view_ ? cluster_view_->members.size() : 0;
  return config_.budget.rate / static_cast<double>(std::max<size_t>(1, nodes));
}

nlohmann::json CrawlLoop::ClusterJson() const {
  if (!cluster_) return nullptr;
  nlohmann::json members = nlohmann::json::array();
  size_t owned = 0, pending = 0;
  std::string ranges;
  bool connected = false;
  std::string problem = "not connected yet";
  if (cluster_view_) {
    for (const auto& m : cluster_view_->members) members.push_back(m.node);
    owned = cluster_view_->shards_owned;
    ranges = cluster::FormatShardRanges(*cluster_view_->owned);
    pending = cluster_view_->shards_pending;
    connected = cluster_view_->connected;
    problem = cluster_view_->problem;
  }
  const double lambda = sched_->threshold();
  return {
      {"node", cluster_->options().node},
      {"nodes", members.size()},
      {"members", members},
      {"shards", config_.cluster.shards},
      {"shards_owned", owned},
      {"shards_pending", pending},
      {"owned", ranges},  // the shards owned, e.g. "0-3,7,9-12"
      // The scheduler's running estimate of its implied threshold (the
      // value of its recent selections); null before any.
      {"lambda", lambda > 0 ? nlohmann::json(lambda) : nlohmann::json()},
      {"rate_share", RateShare()},
      {"connected", connected},
      {"problem", problem.empty() ? nlohmann::json() : nlohmann::json(problem)},
  };
}

void CrawlLoop::AppendClusterMetrics(const nlohmann::json& status,
                                     std::string* out) const {
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
  *out +=
      "# HELP freshd_cluster_info This node's name.\n"
      "# TYPE freshd_cluster_info gauge\nfreshd_cluster_info{node=\"" +
      c["node"].get<std::string>() + "\"} 1\n";
}

}  // namespace freshd::daemon

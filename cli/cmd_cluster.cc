// freshd cluster status [--config FILE | --nats URL]: every node of a
// cluster as its latest heartbeat in the member bucket says
// (cluster/member_list.h), one JSON line per node, sorted by name:
// {"node", "shards", "lambda" (null: not known yet), "rate_share",
// "age_s" (since the server stored it)}, and the node's summary:
// "pages_known", "pages_fetched", "fetch_rate" (pages/s over the last
// minute), "changes" (its change feed's newest seq: events ever committed),
// "shards_owned". The NATS URL comes from --nats or
// the config's [cluster] nats_url. Exit codes: 0 listed (possibly nothing),
// 1 NATS unreachable or no cluster bucket, 2 bad usage or config.

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cluster/cluster_node.h"
#include "cluster/member_list.h"
#include "conf/config.h"
#include "nlohmann/json.hpp"

namespace freshd::cli {
namespace {

struct ClusterArgs {
  std::string config;
  std::string nats;
  std::string bucket = cluster::kMemberBucket;
  double timeout_s = 5;
};

int RunClusterStatus(const ClusterArgs& a) {
  std::string url = a.nats;
  if (url.empty() && !a.config.empty()) {
    auto config = LoadConfigFile(a.config);
    if (!config.ok()) {
      std::fprintf(stderr, "freshd cluster status: %s\n",
                   config.status().ToString().c_str());
      return 2;
    }
    url = config.value().cluster.nats_url;
  }
  if (url.empty()) {
    std::fprintf(stderr,
                 "freshd cluster status: no NATS URL (--nats, or [cluster] "
                 "nats_url in --config)\n");
    return 2;
  }
  auto members = cluster::ListMembers(url, a.bucket, a.timeout_s);
  if (!members.ok()) {
    std::fprintf(stderr, "freshd cluster status: %s\n",
                 members.status().ToString().c_str());
    return 1;
  }
  for (const auto& m : members.value()) {
    nlohmann::json j = {
        {"node", m.info.node},
        {"shards", m.info.shards},
        {"lambda",
         m.info.lambda >= 0 ? nlohmann::json(m.info.lambda) : nlohmann::json()},
        {"rate_share", m.info.rate_share},
        {"age_s", m.age_s}};
    // The node's summary (pages_known, fetch_rate, pages_fetched, changes,
    // shards_owned), when it announces one.
    nlohmann::json summary =
        nlohmann::json::parse(m.info.summary, nullptr, false);
    if (summary.is_object()) {
      for (const auto& [key, value] : summary.items()) {
        if (!j.contains(key)) j[key] = value;
      }
    }
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

}  // namespace

void AddClusterCommand(CLI::App& app, int* exit_code) {
  CLI::App* group =
      app.add_subcommand("cluster", "Inspect a cluster of freshd nodes");
  group->require_subcommand(1);
  CLI::App* status = group->add_subcommand(
      "status", "Print every node's latest heartbeat (JSON Lines)");
  auto a = std::make_shared<ClusterArgs>();
  status->add_option("--config", a->config,
                     "config file whose [cluster] nats_url to use");
  status->add_option("--nats", a->nats, "NATS URL (overrides --config)");
  status->add_option("--bucket", a->bucket, "member bucket");
  status->add_option("--timeout", a->timeout_s, "seconds per NATS call")
      ->check(CLI::Range(0.01, 600.0));
  status->callback([a, exit_code] { *exit_code = RunClusterStatus(*a); });
}

}  // namespace freshd::cli

#include "cluster/cluster_node.h"

#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "base/clock.h"
#include "cluster/nats_conn.h"
#include "cluster/shard_map.h"

namespace freshd::cluster {
namespace {

// Longest heartbeat value accepted (and the bucket's MaxValueSize).
constexpr int kMaxValueBytes = 1024;

bool ValidNodeName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

struct ClusterNode::Nats {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  kvStore* kv = nullptr;
  kvWatcher* watcher = nullptr;

  ~Nats() {
    if (watcher != nullptr) kvWatcher_Destroy(watcher);
    if (kv != nullptr) kvStore_Destroy(kv);
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
};

std::string EncodeMember(const MemberInfo& info, uint64_t instance) {
  nlohmann::json j = {{"shards", info.shards},
                      {"rate_share", info.rate_share},
                      {"instance", instance}};
  if (std::isfinite(info.lambda) && info.lambda >= 0) {
    j["lambda"] = info.lambda;
  } else {
    j["lambda"] = nullptr;
  }
  if (!info.summary.empty()) {
    nlohmann::json summary =
        nlohmann::json::parse(info.summary, nullptr, false);
    if (summary.is_object()) j["summary"] = std::move(summary);
  }
  return j.dump();
}

bool DecodeMember(std::string_view key, std::string_view value,
                  MemberInfo* info, uint64_t* instance) {
  if (value.size() > static_cast<size_t>(kMaxValueBytes)) return false;
  nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  auto shards = j.find("shards");
  auto inst = j.find("instance");
  if (shards == j.end() || !shards->is_number_unsigned() || inst == j.end() ||
      !inst->is_number_unsigned()) {
    return false;
  }
  info->node = std::string(key);
  info->shards = static_cast<uint32_t>(std::min<uint64_t>(
      shards->get<uint64_t>(), std::numeric_limits<uint32_t>::max()));
  auto lambda = j.find("lambda");
  info->lambda =
      lambda != j.end() && lambda->is_number() ? lambda->get<double>() : -1;
  auto share = j.find("rate_share");
  info->rate_share =
      share != j.end() && share->is_number() ? share->get<double>() : 0;
  auto summary = j.find("summary");
  info->summary = summary != j.end() && summary->is_object() ? summary->dump()
                                                             : std::string();
  *instance = inst->get<uint64_t>();
  return true;
}

Result<std::unique_ptr<ClusterNode>> ClusterNode::Create(
    const ClusterNodeOptions& options, ChangeFn on_change) {
  if (options.nats_url.empty()) {
    return Status::InvalidArgument("cluster: empty nats_url");
  }
  if (!ValidNodeName(options.node)) {
    return Status::InvalidArgument(
        "cluster: node name must be 1-64 letters, digits, '-' or '_', got \"" +
        options.node + "\"");
  }
  if (options.shards == 0) {
    return Status::InvalidArgument("cluster: shards must be > 0");
  }
  if (!(options.heartbeat_s > 0) || options.ttl_s < 2 * options.heartbeat_s) {
    return Status::InvalidArgument(
        "cluster: ttl must be at least twice the heartbeat");
  }
  return std::unique_ptr<ClusterNode>(
      new ClusterNode(options, std::move(on_change)));
}

ClusterNode::ClusterNode(const ClusterNodeOptions& options, ChangeFn on_change)
    : options_(options),
      on_change_(std::move(on_change)),
      instance_(std::random_device{}() * uint64_t{0x100000000} +
                std::random_device{}()),
      membership_(options.ttl_s),
      ownership_(options.shards, options.ttl_s) {
  view_.node = options_.node;
  view_.owned = std::make_shared<const std::vector<bool>>(options_.shards);
  view_.problem = "not connected yet";
  published_ = view_;
}

ClusterNode::~ClusterNode() { Stop(); }

void ClusterNode::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void ClusterNode::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ClusterNode::SetSummary(std::string summary) {
  if (summary.size() > kMaxSummaryBytes) summary.clear();
  std::lock_guard<std::mutex> lock(mu_);
  summary_ = std::move(summary);
}

void ClusterNode::SetFigures(double lambda, double rate_share) {
  std::lock_guard<std::mutex> lock(mu_);
  lambda_ = lambda;
  rate_share_ = rate_share;
}

ClusterView ClusterNode::view() const {
  std::lock_guard<std::mutex> lock(mu_);
  return view_;
}

void ClusterNode::Run() {
  while (!stop_) {
    const double now = SteadyNow();
    if (nats_ == nullptr) {
      if (now >= next_connect_ && !Connect(now)) next_connect_ = now + 1;
    }
    if (nats_ != nullptr && now >= next_heartbeat_) Heartbeat(now);
    if (nats_ != nullptr && nats_->watcher != nullptr) {
      Drain(now);
    } else {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(static_cast<int>(kPollS * 1000)));
    }
    Recompute(SteadyNow());
  }
  // Leaving: the others reassign our shards (after their handoff delay)
  // without waiting for our entry to expire.
  if (nats_ != nullptr && nats_->kv != nullptr) {
    natsStatus s = kvStore_Delete(nats_->kv, options_.node.c_str());
    if (s != NATS_OK) {
      spdlog::warn("cluster: could not remove this node's entry: {}",
                   NatsError(s));
    }
  }
  Disconnect();
}

bool ClusterNode::Connect(double now) {
  auto nats = std::make_unique<Nats>();
  natsStatus s =
      ConnectNats(options_.nats_url, "freshd " + options_.node, &nats->nc);
  jsOptions jo;
  if (s == NATS_OK) s = jsOptions_Init(&jo);
  // A JetStream call waits at most half a ttl: a heartbeat that cannot be
  // stored in that time would be late anyway.
  jo.Wait = static_cast<int64_t>(
      std::clamp(options_.ttl_s * 500, 100.0, double{kConnectTimeoutMs}));
  if (s == NATS_OK) s = natsConnection_JetStream(&nats->js, nats->nc, &jo);
  if (s == NATS_OK) {
    s = js_KeyValue(&nats->kv, nats->js, options_.bucket.c_str());
    if (s != NATS_OK) {
      kvConfig cfg;
      kvConfig_Init(&cfg);
      cfg.Bucket = options_.bucket.c_str();
      cfg.Description = "freshd cluster members (heartbeats)";
      cfg.History = 1;
      cfg.MaxValueSize = kMaxValueBytes;
      cfg.TTL = static_cast<int64_t>(options_.ttl_s * 1e9);  // nanoseconds
      s = js_CreateKeyValue(&nats->kv, nats->js, &cfg);
      // Another node may have created it meanwhile: bind to theirs.
      if (s != NATS_OK) {
        s = js_KeyValue(&nats->kv, nats->js, options_.bucket.c_str());
      }
    }
  }
  if (s == NATS_OK) {
    // The bucket another node is creating is not read before it is ready.
    s = WaitStreamReady(nats->js, "$KV." + options_.bucket + "._freshd_ready");
  }
  if (s == NATS_OK) {
    kvWatchOptions wo;
    kvWatchOptions_Init(&wo);
    s = kvStore_WatchAll(&nats->watcher, nats->kv, &wo);
  }
  if (s != NATS_OK) {
    if (!connect_failed_logged_) {
      spdlog::warn(
          "cluster: cannot join through {} (retrying every second): {}",
          options_.nats_url, NatsError(s));
      connect_failed_logged_ = true;
    }
    return false;
  }
  spdlog::info("cluster: node {} joined through {} (bucket {}, {} shards)",
               options_.node, options_.nats_url, options_.bucket,
               options_.shards);
  connect_failed_logged_ = false;
  nats_ = std::move(nats);
  next_heartbeat_ = now;
  joined_at_ = now;
  initial_done_ = false;
  return true;
}

void ClusterNode::Heartbeat(double now) {
  MemberInfo me;
  me.node = options_.node;
  me.shards = options_.shards;
  {
    std::lock_guard<std::mutex> lock(mu_);
    me.lambda = lambda_;
    me.rate_share = rate_share_;
    me.summary = summary_;
  }
  const std::string value = EncodeMember(me, instance_);
  uint64_t rev = 0;
  natsStatus s = kvStore_Put(&rev, nats_->kv, options_.node.c_str(),
                             value.data(), static_cast<int>(value.size()));
  next_heartbeat_ = now + options_.heartbeat_s;
  if (s == NATS_OK) {
    last_stored_ = now;
  } else if (now - last_stored_ >= options_.heartbeat_s * 1.5) {
    spdlog::warn("cluster: heartbeat not stored: {}", NatsError(s));
  }
  // Our own heartbeats have not come back through the watcher for two ttls
  // (not stored, or the watcher lost): start over with a fresh connection,
  // bucket and watcher.
  if (now - std::max(joined_at_, self_heard_) > 2 * options_.ttl_s) {
    spdlog::warn("cluster: own heartbeat not seen for {:.1f} s; reconnecting",
                 now - std::max(joined_at_, self_heard_));
    Disconnect();
  }
}

void ClusterNode::Drain(double now) {
  const auto wait_ms = static_cast<int64_t>(kPollS * 1000);
  for (int i = 0; i < 1024 && !stop_; ++i) {
    kvEntry* e = nullptr;
    natsStatus s = kvWatcher_Next(&e, nats_->watcher, i == 0 ? wait_ms : 0);
    if (s != NATS_OK) return;  // timeout: nothing more for now
    if (e == nullptr) {        // the end of the initial values
      initial_done_ = true;
      continue;
    }
    const std::string key = kvEntry_Key(e);
    const kvOperation op = kvEntry_Operation(e);
    if (op == kvOp_Put) {
      MemberInfo info;
      uint64_t instance = 0;
      const std::string_view value(
          static_cast<const char*>(kvEntry_Value(e)),
          static_cast<size_t>(std::max(0, kvEntry_ValueLen(e))));
      if (DecodeMember(key, value, &info, &instance)) {
        // An entry of our name from another process: a twin, unless it is
        // among the initial values (our previous run's last heartbeat).
        if (key == options_.node && instance != instance_ && initial_done_) {
          if (conflict_until_ < now) {
            spdlog::error(
                "cluster: another process announces this node's name {}; "
                "fetching nothing until it stops",
                key);
          }
          conflict_until_ = now + options_.ttl_s;
        } else if (key != options_.node || instance == instance_) {
          membership_.Heard(info, now);
          if (key == options_.node) self_heard_ = now;
        }
      }
    } else if (op == kvOp_Delete || op == kvOp_Purge) {
      if (key != options_.node) membership_.Left(key);
    }
    kvEntry_Destroy(e);
  }
}

void ClusterNode::Recompute(double now) {
  membership_.Expire(now);
  ClusterView next;
  next.node = options_.node;
  next.connected = last_stored_ >= 0 && now - last_stored_ < options_.ttl_s;
  next.members = membership_.Live(now);
  std::vector<std::string> names;
  bool mismatch = false;
  for (const MemberInfo& m : next.members) {
    names.push_back(m.node);
    if (m.shards != options_.shards) mismatch = true;
  }
  bool changed;
  if (!membership_.IsLive(options_.node, now)) {
    next.problem = nats_ == nullptr ? "not connected to NATS"
                                    : "own heartbeat not seen within ttl";
    changed = ownership_.ReleaseAll();
  } else if (conflict_until_ >= now) {
    next.problem = "another process announces this node's name";
    changed = ownership_.ReleaseAll();
  } else if (mismatch) {
    next.problem = "a live member has a different [cluster] shards";
    changed = ownership_.ReleaseAll();
  } else {
    changed = ownership_.Update(
        OwnedShards(options_.node, names, options_.shards), now);
  }
  next.shards_owned = ownership_.owned_count();
  next.shards_pending = ownership_.pending_count();
  next.owned =
      changed ? std::make_shared<const std::vector<bool>>(ownership_.owned())
              : published_.owned;
  const bool same_members = [&] {
    if (next.members.size() != published_.members.size()) return false;
    for (size_t i = 0; i < next.members.size(); ++i) {
      if (next.members[i].node != published_.members[i].node) return false;
    }
    return true;
  }();
  const bool view_changed = changed || !same_members ||
                            next.connected != published_.connected ||
                            next.problem != published_.problem ||
                            next.shards_pending != published_.shards_pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    view_ = next;  // figures in members are refreshed every pass
  }
  if (!view_changed) return;
  if (next.problem != published_.problem && !next.problem.empty()) {
    spdlog::warn("cluster: owning no shard: {}", next.problem);
  }
  if (changed || !same_members) {
    spdlog::info("cluster: {} live node(s), this node owns {} of {} shards",
                 next.members.size(), next.shards_owned, options_.shards);
  }
  published_ = next;
  if (on_change_) on_change_(next);
}

void ClusterNode::Disconnect() {
  if (nats_ != nullptr && nats_->watcher != nullptr) {
    kvWatcher_Stop(nats_->watcher);
  }
  nats_.reset();
  next_connect_ = 0;
}

}  // namespace freshd::cluster

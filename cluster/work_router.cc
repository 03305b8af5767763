#include "cluster/work_router.h"

#include <nats/nats.h>
#include <spdlog/spdlog.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "cluster/nats_conn.h"

namespace freshd::cluster {
namespace {

// Items published, settled or delivered per turn of the router's thread.
constexpr size_t kBatch = 256;
constexpr int kIdleWaitMs = 50;
constexpr double kStopFlushS = 2;
// The work stream's own bounds (a backlog for owners that are gone).
constexpr int64_t kStreamMaxBytes = int64_t{1} << 30;
constexpr int64_t kStreamMaxAgeNs = int64_t{7} * 86400 * 1000000000;

const char* KindName(WorkItem::Kind kind) {
  switch (kind) {
    case WorkItem::Kind::kSitemap:
      return "sitemap";
    case WorkItem::Kind::kSignal:
      return "signal";
    case WorkItem::Kind::kSeed:
      return "seed";
    case WorkItem::Kind::kLink:
      break;
  }
  return "link";
}

// The stream `name` on `subjects`, created if missing (a node that finds
// it made by another binds to it).
natsStatus EnsureStream(jsCtx* js, const std::string& name,
                        const std::string& subjects, const char* description,
                        jsRetentionPolicy retention, int64_t per_subject) {
  const char* subject_list[] = {subjects.c_str()};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = name.c_str();
  cfg.Description = description;
  cfg.Subjects = subject_list;
  cfg.SubjectsLen = 1;
  cfg.Retention = retention;
  cfg.Storage = js_FileStorage;
  cfg.MaxBytes = kStreamMaxBytes;
  if (per_subject > 0) {
    cfg.MaxMsgsPerSubject = per_subject;
  } else {
    cfg.MaxAge = kStreamMaxAgeNs;
  }
  return cluster::EnsureStream(js, &cfg);
}

std::string DeliverSubject(const std::string& stream, uint32_t shard) {
  return "_freshd_deliver." + stream + "." + std::to_string(shard);
}

}  // namespace

std::string EncodeWork(const WorkItem& item) {
  nlohmann::json j = {{"k", KindName(item.kind)}, {"u", item.url}};
  // -inf (a signal without a change time) is written as null.
  if (std::isfinite(item.value)) j["v"] = item.value;
  if (!item.source.empty()) j["s"] = item.source;
  return j.dump();
}

bool DecodeWork(std::string_view data, WorkItem* item) {
  if (data.size() > kMaxUrlBytes + 256) return false;
  nlohmann::json j = nlohmann::json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  auto k = j.find("k");
  auto u = j.find("u");
  if (k == j.end() || !k->is_string() || u == j.end() || !u->is_string()) {
    return false;
  }
  const std::string kind = k->get<std::string>();
  if (kind == "link") {
    item->kind = WorkItem::Kind::kLink;
  } else if (kind == "sitemap") {
    item->kind = WorkItem::Kind::kSitemap;
  } else if (kind == "signal") {
    item->kind = WorkItem::Kind::kSignal;
  } else if (kind == "seed") {
    item->kind = WorkItem::Kind::kSeed;
  } else {
    return false;
  }
  item->url = u->get<std::string>();
  if (item->url.empty() || item->url.size() > kMaxUrlBytes) return false;
  auto v = j.find("v");
  if (v != j.end() && v->is_number()) {
    item->value = v->get<double>();
  } else {
    item->value = item->kind == WorkItem::Kind::kSignal
                      ? -std::numeric_limits<double>::infinity()
                      : (item->kind == WorkItem::Kind::kSitemap ? 0 : 1);
  }
  item->source.clear();
  auto s = j.find("s");
  if (s != j.end() && s->is_string() &&
      s->get_ref<const std::string&>().size() <= kMaxSourceBytes) {
    item->source = s->get<std::string>();
  }
  return true;
}

struct WorkRouter::Nats {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  std::vector<natsSubscription*> subs;  // by shard; null: not subscribed

  ~Nats() {
    for (natsSubscription* sub : subs) {
      if (sub != nullptr) {
        natsSubscription_Unsubscribe(sub);
        natsSubscription_Destroy(sub);
      }
    }
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
};

struct WorkRouterCallbacks {
  // On a libnats thread: only queues the message.
  static void OnMessage(natsConnection*, natsSubscription*, natsMsg* msg,
                        void* closure) {
    auto* router = static_cast<WorkRouter*>(closure);
    {
      std::lock_guard<std::mutex> lock(router->mu_);
      router->incoming_.push_back(msg);
    }
    router->cv_.notify_one();
  }
};

Result<std::unique_ptr<WorkRouter>> WorkRouter::Create(
    const WorkRouterOptions& options, DeliverFn deliver, ReplayFn replay) {
  if (options.nats_url.empty()) {
    return Status::InvalidArgument("cluster: empty nats_url");
  }
  if (options.shards == 0) {
    return Status::InvalidArgument("cluster: shards must be > 0");
  }
  return std::unique_ptr<WorkRouter>(
      new WorkRouter(options, std::move(deliver), std::move(replay)));
}

WorkRouter::WorkRouter(const WorkRouterOptions& options, DeliverFn deliver,
                       ReplayFn replay)
    : options_(options),
      deliver_(std::move(deliver)),
      replay_(std::move(replay)),
      subscribed_(options.shards, false) {}

WorkRouter::~WorkRouter() { Stop(); }

void WorkRouter::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void WorkRouter::Stop() {
  stop_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& [token, msg] : held_) natsMsg_Destroy(static_cast<natsMsg*>(msg));
  held_.clear();
  nats_.reset();
  std::lock_guard<std::mutex> lock(mu_);
  for (void* msg : incoming_) natsMsg_Destroy(static_cast<natsMsg*>(msg));
  incoming_.clear();
}

void WorkRouter::Publish(uint32_t shard, WorkItem item, DoneFn done) {
  if (shard >= options_.shards || item.url.size() > kMaxUrlBytes) {
    if (done) done(Status::InvalidArgument("cluster: bad work item"));
    return;
  }
  std::vector<DoneFn> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (item.kind == WorkItem::Kind::kLink) {
      const uint64_t key = XXH64(item.url.data(), item.url.size(), 0);
      if (recent_.size() >= kRecentLinks) recent_.clear();
      if (!recent_.insert(key).second) {
        ++stats_.deduped;
        return;
      }
    }
    Pending p{shard, EncodeWork(item), std::move(done), SteadyNow()};
    queue_bytes_ += p.data.size();
    queue_.push_back(std::move(p));
    while (queue_.size() > kPublishQueueItems ||
           queue_bytes_ > kPublishQueueBytes) {
      queue_bytes_ -= queue_.front().data.size();
      if (queue_.front().done)
        dropped.push_back(std::move(queue_.front().done));
      queue_.pop_front();
      ++stats_.dropped;
    }
    stats_.queued = queue_.size();
  }
  cv_.notify_one();
  for (auto& d : dropped) {
    d(Status::Unavailable("cluster: work queue full, oldest dropped"));
  }
}

void WorkRouter::PublishPage(uint32_t shard, uint64_t url_key,
                             std::string_view url, std::string_view value) {
  char key[17];
  std::snprintf(key, sizeof key, "%016llx",
                static_cast<unsigned long long>(url_key));
  PendingPage p{kPageSubjectPrefix + std::to_string(shard) + "." + key, ""};
  p.data.reserve(url.size() + 1 + value.size());
  p.data.append(url).push_back('\0');
  p.data.append(value);
  {
    std::lock_guard<std::mutex> lock(mu_);
    pages_bytes_ += p.data.size();
    pages_.push_back(std::move(p));
    while (pages_.size() > kPageQueueItems || pages_bytes_ > kPageQueueBytes) {
      pages_bytes_ -= pages_.front().data.size();
      pages_.pop_front();
      ++stats_.pages_dropped;
    }
    stats_.pages_queued = pages_.size();
  }
  cv_.notify_one();
}

void WorkRouter::SetOwned(std::shared_ptr<const std::vector<bool>> owned) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    owned_ = std::move(owned);
    owned_changed_ = true;
  }
  cv_.notify_one();
}

void WorkRouter::Ack(std::vector<uint64_t> tokens) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    to_ack_.insert(to_ack_.end(), tokens.begin(), tokens.end());
  }
  cv_.notify_one();
}

void WorkRouter::Nak(std::vector<uint64_t> tokens) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    to_nak_.insert(to_nak_.end(), tokens.begin(), tokens.end());
  }
  cv_.notify_one();
}

WorkRouterStats WorkRouter::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void WorkRouter::Run() {
  while (!stop_) {
    const double now = SteadyNow();
    const bool connected = UpkeepConnection(
        nats_, [this] { return Connect(); }, &next_connect_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.connected = connected;
    }
    if (nats_ != nullptr) {
      ApplyOwned();
      SettleSome();
      DeliverSome();
    }
    if (connected && now >= publish_retry_at_) {
      PublishSome();
      PublishPages();
    }
    // Publishes that cannot be stored in time are answered, not lost: they
    // stay queued without their callback.
    std::vector<DoneFn> late;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (Pending& p : queue_) {
        if (p.done && now - p.queued_at > options_.publish_wait_s) {
          late.push_back(std::move(p.done));
          p.done = nullptr;
        }
      }
      const bool more = ((!queue_.empty() || !pages_.empty()) && connected &&
                         SteadyNow() >= publish_retry_at_) ||
                        !incoming_.empty() || !to_ack_.empty() ||
                        !to_nak_.empty() || owned_changed_;
      if (late.empty() && !more) {
        cv_.wait_for(lock, std::chrono::milliseconds(kIdleWaitMs));
      }
    }
    for (auto& d : late) {
      d(Status::Unavailable("cluster: NATS unreachable; the item is queued"));
    }
  }
  // Stopping: what is queued gets kStopFlushS to be stored.
  publish_retry_at_ = 0;
  FlushBeforeStop(
      kStopFlushS,
      [this] { return nats_ != nullptr && NatsConnected(nats_->nc); },
      [this] {
        std::lock_guard<std::mutex> lock(mu_);
        return !queue_.empty() || !pages_.empty();
      },
      [this] {
        PublishSome();
        PublishPages();
        return publish_retry_at_ <= 0;
      });
}

bool WorkRouter::Connect() {
  auto nats = std::make_unique<Nats>();
  nats->subs.assign(options_.shards, nullptr);
  natsStatus s = ConnectNats(options_.nats_url,
                             "freshd " + options_.node + " work", &nats->nc);
  jsOptions jo;
  if (s == NATS_OK) s = jsOptions_Init(&jo);
  if (s == NATS_OK) s = natsConnection_JetStream(&nats->js, nats->nc, &jo);
  if (s == NATS_OK) {
    s = EnsureStream(nats->js, options_.stream,
                     std::string(kWorkSubjectPrefix) + ">",
                     "freshd work routed to the owners of its shards",
                     js_WorkQueuePolicy, 0);
  }
  if (s == NATS_OK) {
    // A compacted log: each page's latest record.
    s = EnsureStream(
        nats->js, options_.page_stream, std::string(kPageSubjectPrefix) + ">",
        "freshd pages' durable records, one per page", js_LimitsPolicy, 1);
  }
  if (s != NATS_OK) {
    if (!connect_failed_logged_) {
      spdlog::warn(
          "cluster: work stream unreachable through {} ({}); "
          "retrying every second, routed work queued",
          options_.nats_url, NatsError(s));
      connect_failed_logged_ = true;
    }
    return false;
  }
  connect_failed_logged_ = false;
  nats_ = std::move(nats);
  subscribed_.assign(options_.shards, false);
  {
    std::lock_guard<std::mutex> lock(mu_);
    owned_changed_ = true;
  }
  return true;
}

void WorkRouter::ApplyOwned() {
  std::shared_ptr<const std::vector<bool>> owned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!owned_changed_) return;
    owned_changed_ = false;
    owned = owned_;
  }
  std::vector<uint32_t> acquire;
  for (uint32_t s = 0; s < options_.shards; ++s) {
    const bool want = owned != nullptr && s < owned->size() && (*owned)[s];
    if (want == subscribed_[s]) continue;
    natsSubscription*& sub = nats_->subs[s];
    if (!want) {
      if (sub != nullptr) {
        natsSubscription_Unsubscribe(sub);
        natsSubscription_Destroy(sub);
        sub = nullptr;
      }
      subscribed_[s] = false;
      continue;
    }
    acquire.push_back(s);
  }
  if (!acquire.empty()) Acquire(acquire);
}

void WorkRouter::Acquire(const std::vector<uint32_t>& shards) {
  // Their pages first (the state the previous owner published), then their
  // work.
  const double t0 = SteadyNow();
  uint64_t replayed_before = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    replayed_before = stats_.pages_replayed;
  }
  for (uint32_t s : shards) Replay(s);
  replay_(shards, {}, true);
  for (uint32_t s : shards) {
    natsSubscription*& sub = nats_->subs[s];
    // The shard's durable consumer: created by its first owner, the same
    // config every time (so creating it again is a no-op).
    const std::string durable = "shard-" + std::to_string(s);
    const std::string filter = kWorkSubjectPrefix + std::to_string(s);
    const std::string deliver = DeliverSubject(options_.stream, s);
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = durable.c_str();
    cc.DeliverSubject = deliver.c_str();
    cc.FilterSubject = filter.c_str();
    cc.DeliverPolicy = js_DeliverAll;
    cc.AckPolicy = js_AckExplicit;
    cc.AckWait = static_cast<int64_t>(options_.ack_wait_s * 1e9);
    cc.MaxAckPending = kMaxAckPending;
    jsConsumerInfo* ci = nullptr;
    natsStatus st = js_AddConsumer(&ci, nats_->js, options_.stream.c_str(), &cc,
                                   nullptr, nullptr);
    if (st != NATS_OK) {
      st = js_GetConsumerInfo(&ci, nats_->js, options_.stream.c_str(),
                              durable.c_str(), nullptr, nullptr);
    }
    if (ci != nullptr) jsConsumerInfo_Destroy(ci);
    if (st == NATS_OK) {
      st = natsConnection_Subscribe(&sub, nats_->nc, deliver.c_str(),
                                    &WorkRouterCallbacks::OnMessage, this);
    }
    if (st != NATS_OK) {
      spdlog::warn("cluster: cannot consume shard {}'s work: {}", s,
                   NatsError(st));
      std::lock_guard<std::mutex> lock(mu_);
      owned_changed_ = true;  // try again next turn
      continue;
    }
    subscribed_[s] = true;
  }
  std::lock_guard<std::mutex> lock(mu_);
  spdlog::info(
      "cluster: {} shard(s) acquired: {} page records replayed in {:.2f} s",
      shards.size(), stats_.pages_replayed - replayed_before, SteadyNow() - t0);
}

void WorkRouter::PublishSome() {
  for (size_t i = 0; i < kBatch; ++i) {
    Pending p;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) return;
      p = std::move(queue_.front());
      queue_.pop_front();
      queue_bytes_ -= p.data.size();
      stats_.queued = queue_.size();
    }
    const std::string subject = kWorkSubjectPrefix + std::to_string(p.shard);
    jsPubAck* ack = nullptr;
    natsStatus s =
        js_Publish(&ack, nats_->js, subject.c_str(), p.data.data(),
                   static_cast<int>(p.data.size()), nullptr, nullptr);
    if (ack != nullptr) jsPubAck_Destroy(ack);
    if (s != NATS_OK) {
      // Back to the front; try again in a second.
      spdlog::warn("cluster: work not published (retrying): {}", NatsError(s));
      publish_retry_at_ = SteadyNow() + 1;
      std::lock_guard<std::mutex> lock(mu_);
      queue_bytes_ += p.data.size();
      queue_.push_front(std::move(p));
      stats_.queued = queue_.size();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.published;
    }
    if (p.done) p.done(Status::OK());
  }
}

void WorkRouter::PublishPages() {
  for (size_t i = 0; i < kBatch && publish_retry_at_ <= SteadyNow(); ++i) {
    PendingPage p;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (pages_.empty()) return;
      p = std::move(pages_.front());
      pages_.pop_front();
      pages_bytes_ -= p.data.size();
      stats_.pages_queued = pages_.size();
    }
    jsPubAck* ack = nullptr;
    natsStatus s =
        js_Publish(&ack, nats_->js, p.subject.c_str(), p.data.data(),
                   static_cast<int>(p.data.size()), nullptr, nullptr);
    if (ack != nullptr) jsPubAck_Destroy(ack);
    std::lock_guard<std::mutex> lock(mu_);
    if (s != NATS_OK) {
      publish_retry_at_ = SteadyNow() + 1;
      pages_bytes_ += p.data.size();
      pages_.push_front(std::move(p));
      stats_.pages_queued = pages_.size();
      return;
    }
    ++stats_.pages_published;
  }
}

void WorkRouter::Replay(uint32_t shard) {
  // An ephemeral consumer of the shard's pages, delivering to an inbox we
  // listen on first; it holds NumPending records when created.
  natsInbox* inbox = nullptr;
  natsSubscription* sub = nullptr;
  natsStatus s = natsInbox_Create(&inbox);
  if (s == NATS_OK) {
    s = natsConnection_SubscribeSync(&sub, nats_->nc, inbox);
  }
  if (s == NATS_OK) s = natsSubscription_SetPendingLimits(sub, -1, -1);
  const std::string filter = kPageSubjectPrefix + std::to_string(shard) + ".>";
  jsConsumerInfo* ci = nullptr;
  if (s == NATS_OK) {
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.DeliverSubject = inbox;
    cc.FilterSubject = filter.c_str();
    cc.DeliverPolicy = js_DeliverAll;
    cc.AckPolicy = js_AckNone;
    cc.InactiveThreshold = int64_t{30} * 1000000000;
    s = js_AddConsumer(&ci, nats_->js, options_.page_stream.c_str(), &cc,
                       nullptr, nullptr);
  }
  uint64_t expected = 0, read = 0;
  if (s == NATS_OK && ci != nullptr) {
    expected = ci->NumPending + ci->Delivered.Consumer;
  } else {
    spdlog::warn("cluster: cannot replay shard {}'s pages: {}", shard,
                 NatsError(s));
  }
  std::vector<PageState> batch;
  while (read < expected && !stop_) {
    natsMsg* msg = nullptr;
    if (natsSubscription_NextMsg(&msg, sub, 2000) != NATS_OK) {
      spdlog::warn("cluster: shard {}'s replay stopped at {} of {} records",
                   shard, read, expected);
      break;
    }
    ++read;
    const std::string_view data(
        natsMsg_GetData(msg),
        static_cast<size_t>(std::max(0, natsMsg_GetDataLength(msg))));
    const size_t nul = data.find('\0');
    if (nul != std::string_view::npos && nul > 0) {
      batch.push_back({std::string(data.substr(0, nul)),
                       std::string(data.substr(nul + 1))});
    }
    natsMsg_Destroy(msg);
    if (batch.size() >= kReplayBatch) {
      replay_({shard}, std::move(batch), false);
      batch.clear();
    }
  }
  if (ci != nullptr) {
    (void)js_DeleteConsumer(nats_->js, options_.page_stream.c_str(), ci->Name,
                            nullptr, nullptr);
    jsConsumerInfo_Destroy(ci);
  }
  if (sub != nullptr) {
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
  }
  if (inbox != nullptr) natsInbox_Destroy(inbox);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.pages_replayed += read;
    ++stats_.shards_replayed;
  }
  if (!batch.empty()) replay_({shard}, std::move(batch), false);
}

void WorkRouter::SettleSome() {
  std::vector<uint64_t> ack, nak;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ack.swap(to_ack_);
    nak.swap(to_nak_);
    stats_.acked += ack.size();
    stats_.naked += nak.size();
  }
  auto settle = [&](const std::vector<uint64_t>& tokens, const char* reply) {
    for (uint64_t token : tokens) {
      auto it = held_.find(token);
      if (it == held_.end()) continue;
      auto* msg = static_cast<natsMsg*>(it->second);
      const char* to = natsMsg_GetReply(msg);
      if (to != nullptr && *to != '\0') {
        (void)natsConnection_PublishString(nats_->nc, to, reply);
      }
      natsMsg_Destroy(msg);
      held_.erase(it);
    }
  };
  settle(ack, "+ACK");
  settle(nak, "-NAK");
}

void WorkRouter::DeliverSome() {
  std::vector<void*> msgs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    msgs.swap(incoming_);
  }
  if (msgs.empty()) return;
  std::vector<DeliveredWork> batch;
  uint64_t bad = 0;
  for (void* m : msgs) {
    auto* msg = static_cast<natsMsg*>(m);
    DeliveredWork d;
    // The shard: the delivery subject's last token.
    const std::string_view deliver = natsMsg_GetSubject(msg);
    const size_t dot = deliver.rfind('.');
    uint32_t shard = 0;
    bool ok = dot != std::string_view::npos;
    for (size_t i = dot + 1; ok && i < deliver.size(); ++i) {
      ok = deliver[i] >= '0' && deliver[i] <= '9' && shard < options_.shards;
      shard = shard * 10 + static_cast<uint32_t>(deliver[i] - '0');
    }
    ok = ok && shard < options_.shards &&
         DecodeWork(std::string_view(natsMsg_GetData(msg),
                                     static_cast<size_t>(std::max(
                                         0, natsMsg_GetDataLength(msg)))),
                    &d.item);
    if (!ok) {  // not ours to understand: acked, so it does not come back
      ++bad;
      const char* to = natsMsg_GetReply(msg);
      if (to != nullptr && *to != '\0') {
        (void)natsConnection_PublishString(nats_->nc, to, "+ACK");
      }
      natsMsg_Destroy(msg);
      continue;
    }
    d.shard = shard;
    d.token = next_token_++;
    held_.emplace(d.token, msg);
    batch.push_back(std::move(d));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.received += batch.size();
    stats_.bad += bad;
  }
  if (!batch.empty()) deliver_(std::move(batch));
}

}  // namespace freshd::cluster

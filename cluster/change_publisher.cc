#include "cluster/change_publisher.h"

#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "cluster/nats_conn.h"

namespace freshd::cluster {
namespace {

constexpr size_t kBatch = 256;
constexpr int kIdleWaitMs = 50;
constexpr double kStopFlushS = 2;

// The seq after the last ':' of a Msg-Id "<node>:<seq>"; 0 if none.
uint64_t SeqOfMsgId(const char* id) {
  if (id == nullptr) return 0;
  const std::string_view s(id);
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= s.size()) return 0;
  uint64_t seq = 0;
  for (size_t i = colon + 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || seq > UINT64_MAX / 10 - 1) return 0;
    seq = seq * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  return seq;
}

}  // namespace

struct ChangePublisher::Nats {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  ~Nats() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
};

Result<std::unique_ptr<ChangePublisher>> ChangePublisher::Create(
    const ChangePublisherOptions& options) {
  if (options.nats_url.empty()) {
    return Status::InvalidArgument("cluster: empty nats_url");
  }
  if (options.node.empty() ||
      options.node.find_first_of(".*> \t\r\n") != std::string::npos) {
    return Status::InvalidArgument("cluster: node \"" + options.node +
                                   "\" is not a subject token");
  }
  if (options.queue_items == 0 || options.queue_bytes == 0 ||
      options.max_age_s <= 0 || options.max_bytes == 0) {
    return Status::InvalidArgument("cluster: change stream bounds must be > 0");
  }
  return std::unique_ptr<ChangePublisher>(new ChangePublisher(options));
}

ChangePublisher::ChangePublisher(const ChangePublisherOptions& options)
    : options_(options), subject_(kChangeSubjectPrefix + options.node) {
  max_seq_ = options.local_newest;
}

ChangePublisher::~ChangePublisher() { Stop(); }

void ChangePublisher::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void ChangePublisher::Stop() {
  stop_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  nats_.reset();
}

void ChangePublisher::Publish(uint64_t seq, std::string json) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (json.size() > kMaxChangeBytes) {
      ++stats_.bad;
      json = Stub(seq);
    }
    max_seq_ = std::max(max_seq_, seq);
    queue_bytes_ += json.size();
    queue_.push_back({seq, std::move(json)});
    while (queue_.size() > options_.queue_items ||
           queue_bytes_ > options_.queue_bytes) {
      queue_bytes_ -= queue_.front().json.size();
      queue_.pop_front();
      ++stats_.dropped;
    }
    stats_.queued = queue_.size();
  }
  cv_.notify_one();
}

std::string ChangePublisher::Stub(uint64_t seq) const {
  return "{\"node\":\"" + options_.node + "\",\"seq\":" + std::to_string(seq) +
         ",\"error\":\"event over 64 KiB\"}";
}

ChangePublisherStats ChangePublisher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void ChangePublisher::Run() {
  while (!stop_) {
    const double now = MonotonicSeconds();
    if (nats_ == nullptr && now >= next_connect_ && !Connect()) {
      next_connect_ = now + 1;
    }
    const bool connected = nats_ != nullptr && NatsConnected(nats_->nc);
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.connected = connected;
    }
    if (connected && now >= retry_at_) PublishSome();
    std::unique_lock<std::mutex> lock(mu_);
    const bool more =
        !queue_.empty() && connected && MonotonicSeconds() >= retry_at_;
    if (!more) cv_.wait_for(lock, std::chrono::milliseconds(kIdleWaitMs));
  }
  // Stopping: what is queued gets kStopFlushS to be stored.
  const double until = MonotonicSeconds() + kStopFlushS;
  retry_at_ = 0;
  while (nats_ != nullptr && MonotonicSeconds() < until &&
         NatsConnected(nats_->nc)) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) break;
    }
    PublishSome();
    if (retry_at_ > 0) break;
  }
}

bool ChangePublisher::Connect() {
  auto nats = std::make_unique<Nats>();
  natsStatus s = ConnectNats(options_.nats_url,
                             "freshd " + options_.node + " changes", &nats->nc);
  jsOptions jo;
  if (s == NATS_OK) s = jsOptions_Init(&jo);
  if (s == NATS_OK) s = natsConnection_JetStream(&nats->js, nats->nc, &jo);
  if (s == NATS_OK) {
    const std::string subjects = std::string(kChangeSubjectPrefix) + ">";
    const char* subject_list[] = {subjects.c_str()};
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = options_.stream.c_str();
    cfg.Description = "freshd change-feed events of every node";
    cfg.Subjects = subject_list;
    cfg.SubjectsLen = 1;
    cfg.Retention = js_LimitsPolicy;
    cfg.Storage = js_FileStorage;
    cfg.MaxAge = static_cast<int64_t>(options_.max_age_s * 1e9);
    cfg.MaxBytes =
        static_cast<int64_t>(std::min<uint64_t>(options_.max_bytes, INT64_MAX));
    cfg.Duplicates = static_cast<int64_t>(
        std::min(kChangeDuplicateWindowS, options_.max_age_s) * 1e9);
    s = EnsureStream(nats->js, &cfg);
  }
  if (s != NATS_OK) {
    if (!connect_failed_logged_) {
      spdlog::warn(
          "cluster: change stream unreachable through {} ({}); retrying "
          "every second, events queued",
          options_.nats_url, NatsError(s));
      connect_failed_logged_ = true;
    }
    return false;
  }
  connect_failed_logged_ = false;
  nats_ = std::move(nats);
  resync_ = true;
  return true;
}

bool ChangePublisher::ReadLastSeq() {
  natsMsg* msg = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetLastMsg(&msg, nats_->js, options_.stream.c_str(),
                               subject_.c_str(), nullptr, &jerr);
  uint64_t last = 0;
  if (s == NATS_OK) {
    const char* id = nullptr;
    if (natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) == NATS_OK) {
      last = SeqOfMsgId(id);
    }
    natsMsg_Destroy(msg);
  } else if (s != NATS_NOT_FOUND) {
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (last > max_seq_) {
    // Another store's events under this name: skip nothing.
    if (!mismatch_logged_) {
      spdlog::warn(
          "cluster: the change stream holds event {} from node {}, past "
          "this store's newest ({}): another store published under this "
          "name; publishing every event",
          last, options_.node, max_seq_);
      mismatch_logged_ = true;
    }
    skip_through_ = 0;
  } else {
    // Never lower: the stream's limits may have dropped our last event.
    skip_through_ = std::max(skip_through_, last);
  }
  stats_.last_seq = last;
  return true;
}

bool ChangePublisher::NextEvent(Pending* p, bool* from_backlog) {
  for (;;) {
    uint64_t after = 0, before = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Already stored (published before a lost acknowledgement or a
      // reconnect).
      while (!backlog_.empty() && backlog_.front().seq <= skip_through_) {
        backlog_.pop_front();
      }
      while (!queue_.empty() && queue_.front().seq <= skip_through_) {
        queue_bytes_ -= queue_.front().json.size();
        queue_.pop_front();
        ++stats_.skipped;
      }
      stats_.queued = queue_.size();
      if (!backlog_.empty()) {
        *p = std::move(backlog_.front());
        backlog_.pop_front();
        *from_backlog = true;
        return true;
      }
      // Events between the last one stored and the next one queued (or
      // the newest known): read back from the local feed first.
      const uint64_t next = queue_.empty() ? max_seq_ + 1 : queue_.front().seq;
      if (next > skip_through_ + 1) {
        after = skip_through_;
        before = next;
      } else if (queue_.empty()) {
        return false;
      } else {
        *p = std::move(queue_.front());
        queue_.pop_front();
        queue_bytes_ -= p->json.size();
        stats_.queued = queue_.size();
        *from_backlog = false;
        return true;
      }
    }
    std::vector<Pending> read;
    if (options_.backfill) {
      if (Status s = options_.backfill(after, before, kBatch, &read); !s.ok()) {
        spdlog::warn("cluster: change events {}..{} not read back: {}",
                     after + 1, before - 1, s.ToString());
        read.clear();
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    // What the local feed no longer holds is lost.
    const uint64_t first = read.empty() ? before : read.front().seq;
    if (first > after + 1) {
      stats_.lost += first - after - 1;
      skip_through_ = first - 1;
    }
    for (Pending& e : read) {
      if (e.seq > skip_through_ && e.seq < before) {
        if (e.json.size() > kMaxChangeBytes) {
          ++stats_.bad;
          e.json = Stub(e.seq);
        }
        backlog_.push_back(std::move(e));
      }
    }
  }
}

void ChangePublisher::PublishSome() {
  if (resync_) {
    if (!ReadLastSeq()) {
      retry_at_ = MonotonicSeconds() + 1;
      return;
    }
    resync_ = false;
  }
  for (size_t i = 0; i < kBatch; ++i) {
    Pending p;
    bool from_backlog = false;
    if (!NextEvent(&p, &from_backlog)) return;
    const std::string id = options_.node + ":" + std::to_string(p.seq);
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MsgId = id.c_str();
    jsPubAck* ack = nullptr;
    natsStatus s = js_Publish(&ack, nats_->js, subject_.c_str(), p.json.data(),
                              static_cast<int>(p.json.size()), &po, nullptr);
    const bool duplicate = ack != nullptr && ack->Duplicate;
    if (ack != nullptr) jsPubAck_Destroy(ack);
    std::lock_guard<std::mutex> lock(mu_);
    if (s != NATS_OK) {
      // Back to the front; the stream may have stored it all the same, so
      // its last seq is read again before the retry, in a second.
      spdlog::warn("cluster: change event not published (retrying): {}",
                   NatsError(s));
      retry_at_ = MonotonicSeconds() + 1;
      resync_ = true;
      ++stats_.failures;
      if (from_backlog) {
        backlog_.push_front(std::move(p));
      } else {
        queue_bytes_ += p.json.size();
        queue_.push_front(std::move(p));
        stats_.queued = queue_.size();
      }
      return;
    }
    if (duplicate) {
      ++stats_.skipped;
    } else {
      ++stats_.published;
      if (from_backlog) ++stats_.backfilled;
    }
    stats_.last_seq = std::max(stats_.last_seq, p.seq);
    skip_through_ = std::max(skip_through_, p.seq);
  }
}

}  // namespace freshd::cluster

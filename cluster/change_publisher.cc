#include "cluster/change_publisher.h"

#include <nats/nats.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "base/clock.h"
#include "cluster/nats_conn.h"

namespace freshd::cluster {
namespace {

constexpr size_t kBatch = 256;            // events in flight at once, at most
constexpr size_t kWindowBytes = 4 << 20;  // their JSON, at most (one more)
constexpr int64_t kAckWaitMs = 5000;      // for a window's acknowledgements
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

// The acknowledgements of a window of asynchronous publishes, by seq (the
// library's thread writes them; the publisher's thread reads them).
struct AckResults {
  std::mutex mu;
  std::unordered_map<uint64_t, int> by_seq;  // kStored, kDuplicate, kFailed
};
constexpr int kStored = 1;
constexpr int kDuplicate = 2;
constexpr int kFailed = 3;   // no acknowledgement (a lost connection)
constexpr int kRefused = 4;  // the stream answered with an error

void OnAck(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae,
           void* closure) {
  auto* acks = static_cast<AckResults*>(closure);
  const char* id = nullptr;
  uint64_t seq = 0;
  if (natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) == NATS_OK) {
    seq = SeqOfMsgId(id);
  }
  if (seq != 0) {
    const int r = pa != nullptr && pae == nullptr
                      ? (pa->Duplicate ? kDuplicate : kStored)
                  : pae != nullptr && pae->ErrCode != 0 ? kRefused
                                                        : kFailed;
    std::lock_guard<std::mutex> lock(acks->mu);
    acks->by_seq[seq] = r;
  }
  natsMsg_Destroy(msg);
}

}  // namespace

struct ChangePublisher::Acks : AckResults {};

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
    : options_(options),
      subject_(kChangeSubjectPrefix + options.node),
      acks_(std::make_unique<Acks>()) {
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
  return nlohmann::ordered_json{
      {"node", options_.node}, {"seq", seq}, {"error", "event over 64 KiB"}}
      .dump();
}

ChangePublisherStats ChangePublisher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void ChangePublisher::Run() {
  while (!stop_) {
    const bool connected = UpkeepConnection(
        nats_, [this] { return Connect(); }, &next_connect_);
    if (connected && SteadyNow() >= retry_at_) PublishSome();
    std::unique_lock<std::mutex> lock(mu_);
    stats_.connected = connected;
    const bool more = !queue_.empty() && connected && SteadyNow() >= retry_at_;
    if (!more) cv_.wait_for(lock, std::chrono::milliseconds(kIdleWaitMs));
  }
  // Stopping: what is queued gets kStopFlushS to be stored.
  retry_at_ = 0;
  FlushBeforeStop(
      kStopFlushS,
      [this] { return nats_ != nullptr && NatsConnected(nats_->nc); },
      [this] {
        std::lock_guard<std::mutex> lock(mu_);
        return !queue_.empty();
      },
      [this] {
        PublishSome();
        return retry_at_ <= 0;
      });
}

bool ChangePublisher::Connect() {
  auto nats = std::make_unique<Nats>();
  // No reconnects by the library: what it would buffer while disconnected
  // and replay on the next connection could land ahead of events the lost
  // one dropped. A lost connection closes; Run connects afresh and resyncs.
  natsStatus s =
      ConnectNats(options_.nats_url, "freshd " + options_.node + " changes",
                  &nats->nc, /*reconnect=*/false);
  jsOptions jo;
  if (s == NATS_OK) s = jsOptions_Init(&jo);
  if (s == NATS_OK) {
    // A bounded window of publishes in flight; each one's acknowledgement
    // lands in acks_.
    jo.PublishAsync.MaxPending = static_cast<int64_t>(kBatch);
    jo.PublishAsync.AckHandler = OnAck;
    jo.PublishAsync.AckHandlerClosure = static_cast<AckResults*>(acks_.get());
  }
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
    // The stream holds this node's events as a prefix of the seqs (see
    // PublishSome), so all up to `last` are stored — unless the stream
    // refused one and stored later ones (retry_from_): never past it.
    const uint64_t cap = retry_from_ > 0 ? retry_from_ - 1 : UINT64_MAX;
    skip_through_ = std::max(skip_through_, std::min(last, cap));
  }
  retry_from_ = 0;
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
      retry_at_ = SteadyNow() + 1;
      return;
    }
    resync_ = false;
  }
  // A window of up to kBatch events sent without waiting, in seq order on
  // the one connection, then their acknowledgements awaited together.
  struct Sent {
    Pending p;
    bool from_backlog = false;
  };
  std::vector<Sent> sent;
  {
    std::lock_guard<std::mutex> lock(acks_->mu);
    acks_->by_seq.clear();
  }
  natsStatus send_status = NATS_OK;
  size_t window_bytes = 0;
  for (size_t i = 0; i < kBatch && window_bytes < kWindowBytes; ++i) {
    Sent e;
    if (!NextEvent(&e.p, &e.from_backlog)) break;
    {
      // Sent: the next event is the one after it (set back on a failure).
      std::lock_guard<std::mutex> lock(mu_);
      skip_through_ = std::max(skip_through_, e.p.seq);
    }
    const std::string id = options_.node + ":" + std::to_string(e.p.seq);
    natsMsg* msg = nullptr;
    natsStatus s =
        natsMsg_Create(&msg, subject_.c_str(), nullptr, e.p.json.data(),
                       static_cast<int>(e.p.json.size()));
    if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Nats-Msg-Id", id.c_str());
    if (s == NATS_OK) s = js_PublishMsgAsync(nats_->js, &msg, nullptr);
    if (msg != nullptr) natsMsg_Destroy(msg);  // not taken by the library
    window_bytes += e.p.json.size();
    sent.push_back(std::move(e));
    if (s != NATS_OK) {
      send_status = s;
      break;
    }
  }
  if (sent.empty()) return;
  natsStatus s = NATS_OK;
  if (send_status == NATS_OK) {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = kAckWaitMs;
    s = js_PublishAsyncComplete(nats_->js, &po);
  }
  if (send_status != NATS_OK || s != NATS_OK) {
    // What is still in flight is forgotten (its acknowledgement, if one
    // comes, is dropped): the window is sent again with the same Msg-Ids.
    natsMsgList pending;
    if (js_PublishAsyncGetPendingList(&pending, nats_->js) == NATS_OK) {
      natsMsgList_Destroy(&pending);
    }
  }
  std::unordered_map<uint64_t, int> acks;
  {
    std::lock_guard<std::mutex> lock(acks_->mu);
    acks.swap(acks_->by_seq);
  }
  std::lock_guard<std::mutex> lock(mu_);
  // The acknowledged prefix is done, in order; from the first event
  // without a positive acknowledgement on, all go back to the front.
  size_t done = 0;
  for (; done < sent.size(); ++done) {
    const auto it = acks.find(sent[done].p.seq);
    if (it == acks.end() || it->second == kFailed || it->second == kRefused) {
      break;
    }
    if (it->second == kDuplicate) {
      ++stats_.skipped;
    } else {
      ++stats_.published;
      if (sent[done].from_backlog) ++stats_.backfilled;
    }
    stats_.last_seq = std::max(stats_.last_seq, sent[done].p.seq);
    skip_through_ = std::max(skip_through_, sent[done].p.seq);
  }
  if (done == sent.size()) return;
  // Order. The server stores, of what one connection sends, each message
  // in order or finds it a duplicate, and the library does not replay
  // anything on another connection (no reconnects): so the stream holds a
  // prefix of the window, maybe longer than the acknowledged one (lost
  // acknowledgements). From the first unacknowledged event on, the window
  // goes back to the front and is sent again, in order with the same
  // Msg-Ids, after a second and a resync (which skips what the stream
  // holds); what still lands from the first sending is found a duplicate
  // (the stream's duplicate window, 10 min, is far above the ack wait and
  // the resend delay). The only exception: the stream refused an event
  // (an error answer, e.g. a stream made elsewhere with discard=new) and
  // stored a later one. Then that event can only go after it: counted
  // reordered, and the resync must not skip past it.
  bool stored_after = false;
  if (acks.count(sent[done].p.seq) > 0 && acks[sent[done].p.seq] == kRefused) {
    for (size_t i = done + 1; i < sent.size(); ++i) {
      const auto it = acks.find(sent[i].p.seq);
      if (it != acks.end() && it->second == kStored) stored_after = true;
    }
  }
  spdlog::warn("cluster: change events from {} not published (retrying): {}",
               sent[done].p.seq,
               NatsError(send_status != NATS_OK ? send_status
                         : s != NATS_OK         ? s
                                                : NATS_ERR));
  if (stored_after) {
    spdlog::error(
        "cluster: the change stream refused event {} of node {} and stored "
        "later ones: it will be stored after them",
        sent[done].p.seq, options_.node);
    ++stats_.reordered;
  }
  retry_at_ = SteadyNow() + 1;
  resync_ = true;
  retry_from_ = stored_after ? sent[done].p.seq : 0;
  skip_through_ = sent[done].p.seq - 1;
  ++stats_.failures;
  for (size_t i = sent.size(); i-- > done;) {
    if (sent[i].from_backlog) {
      backlog_.push_front(std::move(sent[i].p));
    } else {
      queue_bytes_ += sent[i].p.json.size();
      queue_.push_front(std::move(sent[i].p));
    }
  }
  stats_.queued = queue_.size();
}

}  // namespace freshd::cluster

#include "cluster/change_reader.h"

#include <nats/nats.h>

#include <algorithm>
#include <cmath>

#include "cluster/nats_conn.h"

namespace freshd::cluster {
namespace {

// An ephemeral consumer nobody fetches from goes after this.
constexpr int64_t kInactiveNs = int64_t{60} * 1000000000;
// Bytes a fetch may bring at most (with kMaxChangeBytes a message, a batch
// of kChangeReadMaxBatch stays within this only if messages are small).
constexpr int64_t kFetchMaxBytes = int64_t{16} << 20;
// The shortest a fetch waits for its first message.
constexpr double kMinWaitS = 0.1;
// Empty batches in a row that may wait for messages delivered to us and not
// yet received (ChangeReader::in_transit_waits_): at least 2 s of waits.
constexpr int kMaxInTransitWaits = 20;

}  // namespace

struct ChangeReader::Nats {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  natsSubscription* sub = nullptr;
  void DropSub() {
    if (sub != nullptr) {
      natsSubscription_Unsubscribe(sub);
      natsSubscription_Destroy(sub);
      sub = nullptr;
    }
  }
  ~Nats() {
    DropSub();
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
};

Result<std::unique_ptr<ChangeReader>> ChangeReader::Open(
    const ChangeReaderOptions& options) {
  if (options.nats_url.empty()) {
    return Status::InvalidArgument("changes: empty NATS URL");
  }
  if (options.batch == 0 || options.batch > kChangeReadMaxBatch) {
    return Status::InvalidArgument("changes: batch must be 1.." +
                                   std::to_string(kChangeReadMaxBatch));
  }
  if (!(options.timeout_s > 0) || options.timeout_s > 3600) {
    return Status::InvalidArgument("changes: timeout must be in (0, 3600] s");
  }
  std::unique_ptr<ChangeReader> r(new ChangeReader(options));
  if (Status s = r->Connect(); !s.ok()) return s;
  if (Status s = r->ReadBounds(); !s.ok()) return s;
  if (!r->by_time_ && r->cursor_ > r->newest_) {
    return Status::InvalidArgument(
        "changes: cursor " + std::to_string(r->cursor_) +
        " is past the stream's newest event (" + std::to_string(r->newest_) +
        "); this stream is not the one it came from");
  }
  return r;
}

ChangeReader::ChangeReader(const ChangeReaderOptions& options)
    : options_(options),
      cursor_(options.after),
      by_time_(options.since_unix >= 0) {}

ChangeReader::~ChangeReader() = default;

Status ChangeReader::Connect() {
  auto nats = std::make_unique<Nats>();
  natsStatus s = ConnectNats(options_.nats_url, "freshd changes", &nats->nc);
  jsOptions jo;
  if (s == NATS_OK) s = jsOptions_Init(&jo);
  jo.Wait = static_cast<int64_t>(options_.timeout_s * 1000);
  if (s == NATS_OK) s = natsConnection_JetStream(&nats->js, nats->nc, &jo);
  if (s != NATS_OK) {
    return Status::IOError("cannot reach NATS at " + options_.nats_url + ": " +
                           NatsError(s));
  }
  nats_ = std::move(nats);
  return Status::OK();
}

Status ChangeReader::ReadBounds() {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s =
      js_GetStreamInfo(&si, nats_->js, options_.stream.c_str(), nullptr, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) {
    return Status::NotFound("no stream " + options_.stream + " at " +
                            options_.nats_url +
                            " (no node has published a change yet)");
  }
  if (s != NATS_OK) {
    return Status::IOError("cannot read stream " + options_.stream + ": " +
                           NatsError(s));
  }
  oldest_ = si->State.FirstSeq;
  newest_ = si->State.LastSeq;
  jsStreamInfo_Destroy(si);
  return Status::OK();
}

Status ChangeReader::Subscribe() {
  const std::string filter = std::string(kChangeSubjectPrefix) + ">";
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = options_.stream.c_str();
  so.Config.AckPolicy = js_AckNone;
  so.Config.InactiveThreshold = kInactiveNs;
  if (by_time_) {
    so.Config.DeliverPolicy = js_DeliverByStartTime;
    so.Config.OptStartTime =
        static_cast<int64_t>(std::floor(options_.since_unix)) * 1000000000;
  } else {
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = cursor_ + 1;
  }
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_PullSubscribe(&nats_->sub, nats_->js, filter.c_str(),
                                  nullptr, nullptr, &so, &jerr);
  if (s != NATS_OK) {
    nats_->sub = nullptr;
    return Status::IOError("cannot read stream " + options_.stream + ": " +
                           NatsError(s));
  }
  return Status::OK();
}

Result<ChangeBatch> ChangeReader::Next(double wait_s) {
  if (nats_ == nullptr) {
    if (Status s = Connect(); !s.ok()) return s;
  }
  if (!NatsConnected(nats_->nc)) {
    return Status::IOError("lost NATS at " + options_.nats_url +
                           "; reconnecting");
  }
  ChangeBatch out;
  if (nats_->sub == nullptr) {
    if (Status s = ReadBounds(); !s.ok()) return s;
    if (first_ && !by_time_) {
      out.gap = cursor_ + 1 < oldest_ && cursor_ < newest_;
    }
    if (Status s = Subscribe(); !s.ok()) return s;
    received_ = 0;
    in_transit_waits_ = 0;
  }
  jsFetchRequest req;
  jsFetchRequest_Init(&req);
  req.Batch = static_cast<int>(options_.batch);
  req.MaxBytes = kFetchMaxBytes;
  // (A no-wait request right after the consumer is made can come back
  // empty with messages waiting: a short wait instead.)
  req.Expires = static_cast<int64_t>(std::max(wait_s, kMinWaitS) * 1e9);
  natsMsgList list{};
  natsStatus s = natsSubscription_FetchRequest(&list, nats_->sub, &req);
  if (s != NATS_OK && s != NATS_TIMEOUT && s != NATS_NOT_FOUND) {
    // The consumer or the connection is gone: again from the cursor.
    const std::string what = NatsError(s);
    natsMsgList_Destroy(&list);
    nats_->DropSub();
    return Status::IOError("reading stream " + options_.stream + ": " + what);
  }
  first_ = false;
  uint64_t pending = 0;
  for (int i = 0; i < list.Count; ++i) {
    natsMsg* msg = list.Msgs[i];
    ++received_;
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, msg) != NATS_OK) continue;
    const uint64_t seq = meta->Sequence.Stream;
    pending = meta->NumPending;
    jsMsgMetaData_Destroy(meta);
    if (seq <= cursor_) continue;  // delivered twice: once is enough
    ChangeMessage m;
    m.stream_seq = seq;
    const std::string_view subject = natsMsg_GetSubject(msg);
    const std::string_view prefix = kChangeSubjectPrefix;
    if (subject.substr(0, prefix.size()) == prefix) {
      m.node = std::string(subject.substr(prefix.size()));
    }
    m.data.assign(natsMsg_GetData(msg),
                  static_cast<size_t>(std::max(0, natsMsg_GetDataLength(msg))));
    cursor_ = seq;
    by_time_ = false;  // a consumer made again starts after the cursor
    out.messages.push_back(std::move(m));
  }
  natsMsgList_Destroy(&list);
  if (!out.messages.empty()) in_transit_waits_ = 0;
  if (out.messages.empty()) {
    // Nothing came within the wait: a loaded machine can miss a short one
    // with messages waiting, or receive them after it (the library keeps
    // those for the next fetch). The consumer says whether there is more
    // (not the clock): messages it has not delivered, or delivered and not
    // yet received (on their way to us).
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr = static_cast<jsErrCode>(0);
    if (natsSubscription_GetConsumerInfo(&ci, nats_->sub, nullptr, &jerr) ==
        NATS_OK) {
      pending = ci->NumPending;
      if (ci->Delivered.Consumer > received_ &&
          ++in_transit_waits_ <= kMaxInTransitWaits) {
        ++pending;
      }
      jsConsumerInfo_Destroy(ci);
    }
  }
  if (!out.messages.empty()) newest_ = std::max(newest_, cursor_ + pending);
  out.cursor = cursor_;
  out.oldest = oldest_;
  out.newest = std::max(newest_, cursor_);
  out.more = pending > 0;
  return out;
}

}  // namespace freshd::cluster

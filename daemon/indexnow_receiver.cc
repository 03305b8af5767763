#include "daemon/indexnow_receiver.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "base/ascii.h"
#include "parse/url.h"

namespace freshd::daemon {

struct IndexNowReceiver::Verdict {
  enum class State { kChecking, kProven, kWrong } state = State::kChecking;
  double expires = 0;  // proven or wrong until then
  std::string host;
  std::vector<std::string> waiting;  // URLs pending the check
  std::string why;                   // kWrong: what the file was
};

namespace {

IndexNowReceiver::Reply Refuse(int status, const std::string& error) {
  return {status, {{"error", error}}};
}

// Whether a key file's body proves `key`: the body trimmed, or its first
// line, is the key.
bool ProvesKey(std::string_view body, std::string_view key) {
  const std::string_view whole = TrimAsciiBlanks(body);
  if (whole == key) return true;
  const std::string_view first =
      TrimAsciiBlanks(whole.substr(0, whole.find_first_of("\r\n")));
  return first == key;
}

}  // namespace

const char* RefusalName(IndexNowReceiver::Refusal why) {
  switch (why) {
    case IndexNowReceiver::Refusal::kMalformed:
      return "malformed";
    case IndexNowReceiver::Refusal::kClientRate:
      return "client_rate";
    case IndexNowReceiver::Refusal::kNotOnHost:
      return "not_on_host";
    case IndexNowReceiver::Refusal::kOutOfScope:
      return "out_of_scope";
    case IndexNowReceiver::Refusal::kWrongKey:
      return "wrong_key";
    case IndexNowReceiver::Refusal::kHostRate:
      return "host_rate";
    case IndexNowReceiver::Refusal::kPendingFull:
      return "pending_full";
  }
  return "other";
}

IndexNowReceiver::IndexNowReceiver(Options options, Hooks hooks)
    : options_(options),
      hooks_(std::move(hooks)),
      host_limits_(options.host_requests_per_minute, kMaxKeyVerdicts) {}

IndexNowReceiver::~IndexNowReceiver() { *alive_ = false; }

IndexNowReceiver::Reply IndexNowReceiver::Receive(
    parse::IndexNowRequest request) {
  const double now = hooks_.now();
  Count(received_);
  Count(urls_received_, request.urls.size());
  const auto refuse = [this](Refusal why, int status,
                             const std::string& error) {
    Count(refused_[static_cast<int>(why)]);
    return Refuse(status, error);
  };
  // 1. Scope, before anything else: no fetch for a host the crawl leaves.
  std::vector<std::string> urls;
  urls.reserve(request.urls.size());
  for (std::string& url : request.urls) {
    if (hooks_.in_scope(url)) urls.push_back(std::move(url));
  }
  const uint64_t ignored = request.urls.size() - urls.size();
  if (urls.empty()) {
    return refuse(Refusal::kOutOfScope, 403,
                  "host " + request.host + " is not in this crawler's scope");
  }
  // 2. The key's verdict.
  request.urls = urls;
  const std::string file = parse::KeyFileUrl(request);
  const std::string id = file + "\n" + request.key;
  auto it = verdicts_.find(id);
  if (it != verdicts_.end() && it->second.state != Verdict::State::kChecking &&
      it->second.expires <= now) {
    verdicts_.erase(it);
    it = verdicts_.end();
  }
  if (it != verdicts_.end() && it->second.state == Verdict::State::kProven) {
    if (!host_limits_.Allow(request.host, now)) {
      return refuse(Refusal::kHostRate, 429,
                    "too many pings for host " + request.host);
    }
    Count(accepted_, urls.size());
    const size_t n = urls.size();
    hooks_.signal(std::move(urls));
    return {200, {{"accepted", n}, {"ignored", ignored}}};
  }
  if (it != verdicts_.end() && it->second.state == Verdict::State::kWrong) {
    return refuse(Refusal::kWrongKey, 403,
                  "key not proven by " + file + ": " + it->second.why);
  }
  // Checking, or to be checked: the URLs wait in the host's queue.
  size_t& waiting = pending_per_host_[request.host];
  if (waiting + urls.size() >
      static_cast<size_t>(options_.max_pending_per_host)) {
    if (waiting == 0) pending_per_host_.erase(request.host);
    return refuse(
        Refusal::kPendingFull, 429,
        "too many URLs of " + request.host + " wait for their key check");
  }
  if (it == verdicts_.end()) {
    size_t& checks = checks_per_host_[request.host];
    if (checks >= kMaxKeyChecksPerHost || !MakeRoom(now)) {
      if (checks == 0) checks_per_host_.erase(request.host);
      if (waiting == 0) pending_per_host_.erase(request.host);
      return refuse(Refusal::kPendingFull, 429,
                    "too many key checks under way; try again later");
    }
    ++checks;
    it = verdicts_.emplace(id, Verdict{}).first;
    it->second.host = request.host;
    Count(key_fetches_);
    hooks_.fetch(file, [this, id, alive = alive_](fetch::FetchResult r) {
      if (!*alive) return;
      KeyFileFetched(id, r);
    });
  }
  waiting += urls.size();
  Count(pending_, urls.size());
  const size_t n = urls.size();
  auto& queue = it->second.waiting;
  queue.insert(queue.end(), std::make_move_iterator(urls.begin()),
               std::make_move_iterator(urls.end()));
  return {202, {{"pending", n}, {"ignored", ignored}}};
}

void IndexNowReceiver::KeyFileFetched(const std::string& id,
                                      const fetch::FetchResult& r) {
  auto it = verdicts_.find(id);
  if (it == verdicts_.end()) return;
  Verdict& v = it->second;
  const std::string key = id.substr(id.rfind('\n') + 1);
  const bool proven = r.outcome == fetch::OutcomeClass::kOk &&
                      r.status >= 200 && r.status < 300 &&
                      ProvesKey(r.body, key);
  v.state = proven ? Verdict::State::kProven : Verdict::State::kWrong;
  if (!proven) {
    v.why =
        r.outcome == fetch::OutcomeClass::kOk
            ? "the file does not hold the key"
            : "fetch failed (" + std::string(fetch::OutcomeName(r.outcome)) +
                  (r.status > 0 ? " " + std::to_string(r.status) : "") + ")";
  }
  v.expires = hooks_.now() + options_.key_cache_s;
  if (auto c = checks_per_host_.find(v.host); c != checks_per_host_.end()) {
    if (--c->second == 0) checks_per_host_.erase(c);
  }
  std::vector<std::string> waiting = std::move(v.waiting);
  v.waiting.clear();
  if (auto p = pending_per_host_.find(v.host); p != pending_per_host_.end()) {
    p->second -= std::min(p->second, waiting.size());
    if (p->second == 0) pending_per_host_.erase(p);
  }
  pending_.fetch_sub(waiting.size(), std::memory_order_relaxed);
  if (waiting.empty()) return;
  if (proven) {
    Count(accepted_, waiting.size());
    hooks_.signal(std::move(waiting));
  } else {
    Count(dropped_, waiting.size());
  }
}

bool IndexNowReceiver::MakeRoom(double now) {
  if (verdicts_.size() < kMaxKeyVerdicts) return true;
  std::erase_if(verdicts_, [now](const auto& entry) {
    return entry.second.state != Verdict::State::kChecking &&
           entry.second.expires <= now;
  });
  return verdicts_.size() < kMaxKeyVerdicts;
}

nlohmann::json IndexNowReceiver::Json() const {
  nlohmann::json refused = nlohmann::json::object();
  for (int i = 0; i < kRefusals; ++i) {
    refused[RefusalName(static_cast<Refusal>(i))] =
        refused_[i].load(std::memory_order_relaxed);
  }
  const auto get = [](const std::atomic<uint64_t>& a) {
    return a.load(std::memory_order_relaxed);
  };
  return {{"received", get(received_)}, {"urls_received", get(urls_received_)},
          {"accepted", get(accepted_)}, {"pending", get(pending_)},
          {"dropped", get(dropped_)},   {"key_fetches", get(key_fetches_)},
          {"refused", refused}};
}

void IndexNowReceiver::AppendMetrics(PrometheusText& out) const {
  const auto get = [](const std::atomic<uint64_t>& a) {
    return static_cast<double>(a.load(std::memory_order_relaxed));
  };
  out.Counter("freshd_indexnow_received_total",
              "IndexNow pings received (refused ones included).",
              get(received_));
  out.Counter("freshd_indexnow_urls_received_total",
              "URLs in the IndexNow pings that reached the receiver.",
              get(urls_received_));
  out.Counter("freshd_indexnow_accepted_total",
              "IndexNow URLs accepted as change hints (key proven).",
              get(accepted_));
  out.Gauge("freshd_indexnow_pending",
            "IndexNow URLs waiting for their key check.", get(pending_));
  out.Counter("freshd_indexnow_dropped_total",
              "IndexNow URLs dropped when their key was not proven.",
              get(dropped_));
  out.Counter("freshd_indexnow_key_fetches_total",
              "IndexNow key files fetched.", get(key_fetches_));
  out.Family("freshd_indexnow_refused_total", "counter",
             "IndexNow pings refused, by reason.");
  for (int i = 0; i < kRefusals; ++i) {
    out.Sample("freshd_indexnow_refused_total",
               {{"reason", RefusalName(static_cast<Refusal>(i))}},
               get(refused_[i]));
  }
}

}  // namespace freshd::daemon

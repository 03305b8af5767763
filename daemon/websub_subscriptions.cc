#include "daemon/websub_subscriptions.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "parse/url.h"
#include "spdlog/spdlog.h"

namespace freshd::daemon {
namespace {

// A lease the hub grants is taken up to this (ten years); longer is junk.
constexpr double kMaxLeaseS = 10 * 365 * 86400.0;

// application/x-www-form-urlencoded: unreserved bytes as they are, the
// rest %XX.
void AppendFormField(std::string* out, std::string_view name,
                     std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  if (!out->empty()) out->push_back('&');
  out->append(name);
  out->push_back('=');
  for (unsigned char c : value) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out->push_back(static_cast<char>(c));
    } else {
      out->push_back('%');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The WebSub §8 signature methods.
const EVP_MD* SignatureMethod(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
  }
  if (lower == "sha1") return EVP_sha1();
  if (lower == "sha256") return EVP_sha256();
  if (lower == "sha384") return EVP_sha384();
  if (lower == "sha512") return EVP_sha512();
  return nullptr;
}

}  // namespace

const char* WebSubStateName(WebSubSubscriptions::State state) {
  switch (state) {
    case WebSubSubscriptions::State::kSubscribing:
      return "pending";
    case WebSubSubscriptions::State::kActive:
      return "active";
    case WebSubSubscriptions::State::kUnsubscribing:
      return "unsubscribing";
    case WebSubSubscriptions::State::kDenied:
      return "denied";
    case WebSubSubscriptions::State::kFailed:
      return "failed";
  }
  return "?";
}

WebSubSubscriptions::WebSubSubscriptions(Options options, Hooks hooks)
    : options_(std::move(options)), hooks_(std::move(hooks)) {}

WebSubSubscriptions::~WebSubSubscriptions() { *alive_ = false; }

bool WebSubSubscriptions::WellFormedId(std::string_view id) {
  if (id.size() != 2 * kWebSubIdBytes) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

bool WebSubSubscriptions::SignatureMatches(std::string_view signature,
                                           std::string_view secret,
                                           std::string_view body) {
  const size_t eq = signature.find('=');
  if (eq == std::string_view::npos) return false;
  const EVP_MD* md = SignatureMethod(signature.substr(0, eq));
  if (md == nullptr) return false;
  std::string_view hex = signature.substr(eq + 1);
  while (!hex.empty() && (hex.back() == ' ' || hex.back() == '\t'))
    hex.remove_suffix(1);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  if (HMAC(md, secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(body.data()), body.size(),
           mac, &mac_len) == nullptr) {
    return false;
  }
  if (hex.size() != 2 * static_cast<size_t>(mac_len)) return false;
  unsigned char given[EVP_MAX_MD_SIZE];
  for (unsigned int i = 0; i < mac_len; ++i) {
    const int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    given[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return CRYPTO_memcmp(given, mac, mac_len) == 0;
}

std::string WebSubSubscriptions::RandomHex(size_t bytes) const {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes);
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string WebSubSubscriptions::Callback(const std::string& id) const {
  std::string base = options_.public_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + std::string(kWebSubPath) + id;
}

size_t WebSubSubscriptions::Restore(
    const std::vector<store::SubscriptionRecord>& records) {
  const double now = hooks_.now();
  for (const store::SubscriptionRecord& r : records) {
    const bool known_state =
        r.state >= static_cast<uint8_t>(State::kSubscribing) &&
        r.state <= static_cast<uint8_t>(State::kFailed);
    if (!enabled() || subs_.size() >= options_.max_subscriptions ||
        !known_state || !WellFormedId(r.id) || r.secret.empty() ||
        by_feed_.count(r.feed_url) != 0) {
      Mark(r.id);  // deleted with the next commit
      continue;
    }
    Subscription& s = subs_[r.id];
    s.record = r;
    by_feed_[r.feed_url] = r.id;
    if (StateOf(s) == State::kActive) {
      if (s.record.lease_end_unix > now) {
        if (hooks_.set_pushed) hooks_.set_pushed(r.feed_url, true);
      } else {
        SetState(s, State::kSubscribing);  // lapsed while down: ask again
        s.record.next_action_unix = now;
        Mark(r.id);
      }
    }
  }
  PublishCounts();
  if (marked() && hooks_.commit) hooks_.commit();
  return subs_.size();
}

void WebSubSubscriptions::SetState(Subscription& s, State state) {
  const State was = StateOf(s);
  s.record.state = static_cast<uint8_t>(state);
  if (was == state || !hooks_.set_pushed) return;
  if (state == State::kActive) hooks_.set_pushed(s.record.feed_url, true);
  if (was == State::kActive) hooks_.set_pushed(s.record.feed_url, false);
}

void WebSubSubscriptions::Discovered(const std::string& feed_url,
                                     const std::string& self_url,
                                     const std::vector<std::string>& hubs) {
  if (!enabled() || hubs.empty() || by_feed_.count(feed_url) != 0) return;
  if (Elsewhere(feed_url)) return;
  if (subs_.size() >= options_.max_subscriptions) {
    Count(refused_full_);
    return;
  }
  std::string id = RandomHex(kWebSubIdBytes);
  std::string secret = RandomHex(kWebSubSecretBytes);
  if (id.empty() || secret.empty() || subs_.count(id) != 0) {
    spdlog::error("websub: no random bytes for a subscription to {}", feed_url);
    return;
  }
  Subscription& s = subs_[id];
  s.record.id = id;
  s.record.feed_url = feed_url;
  // WebSub §4: the topic is the self URL the feed names; a feed without
  // one is subscribed under the URL it was polled at.
  s.record.topic = self_url.empty() ? feed_url : self_url;
  s.record.hub = hubs.front();
  s.record.secret = std::move(secret);
  s.record.state = static_cast<uint8_t>(State::kSubscribing);
  by_feed_[feed_url] = id;
  Mark(id);
  Send(s, /*subscribe=*/true);
  PublishCounts();
  if (hooks_.commit) hooks_.commit();
}

void WebSubSubscriptions::Forget(const std::string& feed_url) {
  auto f = by_feed_.find(feed_url);
  if (f == by_feed_.end()) return;
  const std::string id = f->second;
  Subscription& s = subs_.at(id);
  const State state = StateOf(s);
  if (state == State::kUnsubscribing) return;
  if (state == State::kDenied || state == State::kFailed) {
    Drop(id);  // the hub holds nothing for us
  } else {
    SetState(s, State::kUnsubscribing);
    s.awaiting = false;
    s.record.next_action_unix = hooks_.now();
    Mark(id);
    if (!s.in_flight) Send(s, /*subscribe=*/false);
  }
  PublishCounts();
  if (hooks_.commit) hooks_.commit();
}

void WebSubSubscriptions::Send(Subscription& s, bool subscribe) {
  const double now = hooks_.now();
  s.in_flight = true;
  s.awaiting = true;
  s.last_request = now;
  s.record.next_action_unix = now + options_.verify_timeout_s;
  Count(requests_);
  std::string form;
  AppendFormField(&form, "hub.mode", subscribe ? "subscribe" : "unsubscribe");
  AppendFormField(&form, "hub.topic", s.record.topic);
  AppendFormField(&form, "hub.callback", Callback(s.record.id));
  if (subscribe) {
    AppendFormField(
        &form, "hub.lease_seconds",
        std::to_string(static_cast<int64_t>(std::llround(options_.lease_s))));
    AppendFormField(&form, "hub.secret", s.record.secret);
  }
  hooks_.post(s.record.hub, std::move(form),
              [this, alive = alive_, id = s.record.id,
               subscribe](fetch::FetchResult r) {
                if (*alive) RequestDone(id, subscribe, r);
              });
}

void WebSubSubscriptions::RequestDone(const std::string& id, bool subscribe,
                                      const fetch::FetchResult& r) {
  auto it = subs_.find(id);
  if (it == subs_.end()) return;
  Subscription& s = it->second;
  s.in_flight = false;
  // §5.1: the hub answers 202 Accepted (any 2xx is taken) and verifies
  // intent with a GET to the callback, before or after this reply.
  const bool accepted = r.status >= 200 && r.status < 300;
  const State state = StateOf(s);
  if (subscribe && state == State::kUnsubscribing) {
    // Forgotten meanwhile: the unsubscribe goes now.
    Send(s, /*subscribe=*/false);
  } else if (!accepted) {
    Count(request_failures_);
    spdlog::info("websub: {} to {} for {} failed: {} {}",
                 subscribe ? "subscribe" : "unsubscribe", s.record.hub,
                 s.record.topic, r.status, r.detail);
    if (subscribe) {
      Failed(s);
    } else {
      Drop(id);
    }
  }
  PublishCounts();
  if (marked() && hooks_.commit) hooks_.commit();
}

void WebSubSubscriptions::Failed(Subscription& s) {
  const double now = hooks_.now();
  s.awaiting = false;
  ++s.record.failures;
  const double backoff = std::min(
      options_.retry_max_s,
      options_.retry_base_s *
          std::pow(2.0, std::min<uint32_t>(s.record.failures, 40) - 1));
  s.record.next_action_unix = now + backoff;
  // A renewal that fails leaves the lease running until it ends.
  if (!(StateOf(s) == State::kActive && s.record.lease_end_unix > now)) {
    SetState(s, State::kFailed);
  }
  Mark(s.record.id);
}

void WebSubSubscriptions::Drop(std::string id) {
  auto it = subs_.find(id);
  if (it == subs_.end()) return;
  SetState(it->second, State::kUnsubscribing);  // no longer pushed
  by_feed_.erase(it->second.record.feed_url);
  subs_.erase(it);
  Mark(id);
}

WebSubSubscriptions::Reply WebSubSubscriptions::Verify(std::string_view id,
                                                       std::string_view query) {
  auto it = subs_.find(id);
  if (it == subs_.end()) {
    Count(unknown_callbacks_);
    return {404, "no such subscription"};
  }
  Subscription& s = it->second;
  const std::optional<std::string> mode = parse::FormValue(query, "hub.mode");
  const std::optional<std::string> topic = parse::FormValue(query, "hub.topic");
  const State state = StateOf(s);
  const double now = hooks_.now();
  if (!mode || !topic || *topic != s.record.topic) {
    return {404, "no such subscription"};
  }
  if (*mode == "denied") {
    // §5.2: the hub refused (or ended) the subscription.
    if (state == State::kUnsubscribing) {
      Drop(it->first);
    } else {
      Count(denied_total_);
      s.awaiting = false;
      SetState(s, State::kDenied);
      s.record.next_action_unix = now + options_.denied_retry_s;
      Mark(s.record.id);
    }
    PublishCounts();
    if (hooks_.commit) hooks_.commit();
    return {200, ""};
  }
  const std::optional<std::string> challenge =
      parse::FormValue(query, "hub.challenge");
  if (!challenge || challenge->empty()) return {404, "no challenge"};
  if (*mode == "subscribe" &&
      (state == State::kSubscribing || state == State::kActive)) {
    // §5.3: hub.lease_seconds is REQUIRED on subscribe verifications; a
    // missing or unreadable one is taken as the lease asked for.
    double lease = options_.lease_s;
    if (auto l = parse::FormValue(query, "hub.lease_seconds")) {
      char* end = nullptr;
      const double v = std::strtod(l->c_str(), &end);
      if (end != l->c_str() && *end == '\0' && std::isfinite(v) && v >= 0) {
        lease = std::min(v, kMaxLeaseS);
      }
    }
    Count(verifications_);
    if (state == State::kActive) Count(renewals_);
    s.awaiting = false;
    s.record.failures = 0;
    s.record.lease_end_unix = now + lease;
    // Renewed at 85% of the lease, never sooner than min_renew_interval
    // after the last request: a hub granting a 1 s lease cannot make
    // freshd ask again in a loop.
    s.record.next_action_unix =
        std::max(now + kWebSubRenewAt * lease,
                 std::max(s.last_request, now - options_.min_renew_interval_s) +
                     options_.min_renew_interval_s);
    SetState(s, State::kActive);
    Mark(s.record.id);
    PublishCounts();
    if (hooks_.commit) hooks_.commit();
    return {200, *challenge};
  }
  if (*mode == "unsubscribe" && state == State::kUnsubscribing) {
    Count(verifications_);
    Drop(it->first);
    PublishCounts();
    if (hooks_.commit) hooks_.commit();
    return {200, *challenge};
  }
  return {404, "not expected"};
}

WebSubSubscriptions::Reply WebSubSubscriptions::Deliver(
    std::string_view id, std::string_view signature, std::string body) {
  auto it = subs_.find(id);
  if (it == subs_.end()) {
    Count(unknown_callbacks_);
    return {410, "no such subscription"};  // §8: the hub may end it
  }
  const Subscription& s = it->second;
  if (StateOf(s) == State::kUnsubscribing) return {202, ""};
  if (!SignatureMatches(signature, s.record.secret, body)) {
    // §8: ignored; acknowledged all the same (no oracle, no retries).
    Count(signature_failures_);
    return {202, ""};
  }
  Count(accepted_);
  if (hooks_.deliver) hooks_.deliver(s.record.feed_url, std::move(body));
  return {202, ""};
}

void WebSubSubscriptions::Tick() {
  if (subs_.empty()) return;
  const double now = hooks_.now();
  std::vector<std::string> due;
  for (auto& [id, s] : subs_) {
    if (s.in_flight) continue;
    if (StateOf(s) == State::kActive && s.record.lease_end_unix <= now) {
      // The lease ran out before a renewal was verified: polled at the
      // normal rate again; the renewal stays due.
      SetState(s, State::kSubscribing);
      Mark(id);
    }
    const bool disowned =
        StateOf(s) != State::kUnsubscribing && Elsewhere(s.record.feed_url);
    if (disowned || s.record.next_action_unix <= now) due.push_back(id);
  }
  for (const std::string& id : due) {
    auto it = subs_.find(id);
    if (it == subs_.end()) continue;
    Subscription& s = it->second;
    const State state = StateOf(s);
    if (state != State::kUnsubscribing && Elsewhere(s.record.feed_url)) {
      // Another node's feed now (cluster): its owner subscribes when it
      // polls the feed; this node lets go.
      Forget(std::string(s.record.feed_url));
      continue;
    }
    if (s.last_request >= 0 &&
        now - s.last_request < options_.min_renew_interval_s) {
      s.record.next_action_unix =
          s.last_request + options_.min_renew_interval_s;
      continue;
    }
    switch (state) {
      case State::kUnsubscribing:
        if (s.awaiting) {
          Drop(id);  // no verification came: let the lease run out
        } else {
          Send(s, /*subscribe=*/false);
        }
        break;
      case State::kSubscribing:
      case State::kActive:
        if (s.awaiting) {
          Count(request_failures_);
          Failed(s);  // accepted, never verified
        } else {
          Send(s, /*subscribe=*/true);
        }
        break;
      case State::kDenied:
      case State::kFailed:
        SetState(s, State::kSubscribing);
        Send(s, /*subscribe=*/true);
        break;
    }
    Mark(id);
  }
  PublishCounts();
  if (marked() && hooks_.commit) hooks_.commit();
}

void WebSubSubscriptions::TakeBatch(store::StoreBatch* batch) {
  for (const std::string& id : dirty_) {
    auto it = subs_.find(id);
    if (it != subs_.end()) {
      batch->PutSubscription(it->second.record);
    } else {
      batch->DeleteSubscription(id);
    }
  }
  dirty_.clear();
}

void WebSubSubscriptions::PublishCounts() {
  uint64_t counts[6] = {};
  for (const auto& [id, s] : subs_) {
    if (s.record.state < 6) ++counts[s.record.state];
  }
  for (int i = 0; i < 6; ++i) {
    by_state_[i].store(counts[i], std::memory_order_relaxed);
  }
}

nlohmann::json WebSubSubscriptions::Json() const {
  const auto get = [](const std::atomic<uint64_t>& a) {
    return a.load(std::memory_order_relaxed);
  };
  uint64_t total = 0;
  for (const auto& c : by_state_) total += get(c);
  const auto state = [&](State s) {
    return get(by_state_[static_cast<int>(s)]);
  };
  return {{"enabled", enabled()},
          {"subscriptions", total},
          {"active", state(State::kActive)},
          {"pending", state(State::kSubscribing)},
          {"unsubscribing", state(State::kUnsubscribing)},
          {"denied", state(State::kDenied)},
          {"failed", state(State::kFailed)},
          {"requests_total", get(requests_)},
          {"renewals_total", get(renewals_)},
          {"verifications_total", get(verifications_)},
          {"deliveries_accepted_total", get(accepted_)},
          {"signature_failures_total", get(signature_failures_)},
          {"unknown_callbacks_total", get(unknown_callbacks_)},
          {"refused_full_total", get(refused_full_)},
          {"denied_total", get(denied_total_)},
          {"request_failures_total", get(request_failures_)}};
}

void WebSubSubscriptions::AppendMetrics(PrometheusText& out) const {
  const auto get = [](const std::atomic<uint64_t>& a) {
    return static_cast<double>(a.load(std::memory_order_relaxed));
  };
  out.Family("freshd_websub_subscriptions", "gauge",
             "WebSub subscriptions, by state.");
  for (State s : {State::kSubscribing, State::kActive, State::kUnsubscribing,
                  State::kDenied, State::kFailed}) {
    out.Sample("freshd_websub_subscriptions", {{"state", WebSubStateName(s)}},
               get(by_state_[static_cast<int>(s)]));
  }
  out.Counter("freshd_websub_requests_total",
              "Subscribe and unsubscribe requests sent to hubs.",
              get(requests_));
  out.Counter("freshd_websub_renewals_total",
              "Subscriptions renewed (verified again while active).",
              get(renewals_));
  out.Counter("freshd_websub_verifications_total",
              "Verifications of intent answered with the challenge.",
              get(verifications_));
  out.Counter("freshd_websub_deliveries_accepted_total",
              "Content deliveries whose signature matched.", get(accepted_));
  out.Counter("freshd_websub_signature_failures_total",
              "Content deliveries ignored: signature missing or wrong.",
              get(signature_failures_));
  out.Counter("freshd_websub_unknown_callbacks_total",
              "Callback requests for no known subscription.",
              get(unknown_callbacks_));
  out.Counter("freshd_websub_refused_full_total",
              "Hubs not subscribed to: max_subscriptions reached.",
              get(refused_full_));
  out.Counter("freshd_websub_denied_total",
              "Subscriptions the hub denied (hub.mode=denied).",
              get(denied_total_));
  out.Counter("freshd_websub_request_failures_total",
              "Hub requests that failed or were never verified.",
              get(request_failures_));
}

}  // namespace freshd::daemon

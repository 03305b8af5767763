// WebSubSubscriptions: freshd as a WebSub subscriber (W3C Recommendation
// "WebSub", 23 January 2018), for the site feeds signal intake polls.
//   * Discovered: a polled feed named hubs (Link headers first, else the
//     feed's <link rel="hub">, parse/feed.h). The first hub is asked
//     (§5.1): POST hub.mode=subscribe, hub.topic (the feed's self URL, else
//     the URL polled), hub.callback = public_url + "/websub/" + ID, where ID
//     is 128 random bits (OpenSSL RAND_bytes, hex) per subscription,
//     hub.lease_seconds (Options::lease_s) and hub.secret (32 random bytes,
//     hex: 64 characters, under §5.1's 200 bytes), through Hooks::post
//     (freshd's fetcher: politeness gate and SSRF guard). At most
//     max_subscriptions at once (a hub on another host than the feed is
//     normal, so the total is what is bounded).
//   * Verify (GET /websub/ID on the push listener, §5.3): echoes
//     hub.challenge (200, text/plain) only when hub.mode and hub.topic
//     match what this subscription waits for (subscribe while subscribing
//     or active, unsubscribe while unsubscribing); records
//     hub.lease_seconds; 404 otherwise. hub.mode=denied (§5.2) on a
//     subscription: it is denied, retried after denied_retry_s; 200.
//   * Deliver (POST /websub/ID, §8): the body's HMAC under the secret must
//     match X-Hub-Signature (sha1, sha256, sha384 or sha512 =hex, compared
//     in constant time); a mismatch or a missing signature is ignored and
//     counted. Both are answered 202, as §8 allows ("MAY still acknowledge
//     ... to prevent brute-force attempts of the signature"), so a hub
//     neither retries forever nor learns which signatures fail. A valid
//     body goes to Hooks::deliver (signal intake parses it as a polled
//     feed body). An unknown ID: 410 Gone (§8: the hub MAY then end the
//     subscription).
//   * Tick: renewals at 85% of the lease, but never sooner than
//     min_renew_interval_s after the last request for the subscription (a
//     hub granting lease_seconds=1 gets one request a min_renew_interval,
//     not a loop); requests that fail (or get no verification within
//     verify_timeout_s) retried after retry_base_s doubling up to
//     retry_max_s; a lease that ends un-renewed stops counting as pushed;
//     a feed whose host the cluster gives to another node is unsubscribed
//     (Hooks::elsewhere; its new owner subscribes with its own callback
//     and secret when it polls the feed), while a node that does not know
//     yet (starting, cut off from NATS) keeps its subscriptions.
//   * Forget: the feed left the site feeds: unsubscribe (§5.1
//     hub.mode=unsubscribe), the record dropped once the hub verifies it,
//     or after verify_timeout_s, or when the request fails.
// Hooks::set_pushed tells signal intake when a feed's subscription starts
// or stops being active (its polling slows while it is).
// Records are marked when they change and taken by the group commit
// (TakeBatch, store/subscription_table.h); Restore puts them back at start.
// Off (nothing subscribed) without a public_url or with max_subscriptions 0.
// Thread: one (the crawl loop's scheduler thread); Hooks::post's `done` must
// be called on it. Json() and AppendMetrics() read atomics and a snapshot
// of the counts: safe from the status thread.

#ifndef FRESHD_DAEMON_WEBSUB_SUBSCRIPTIONS_H_
#define FRESHD_DAEMON_WEBSUB_SUBSCRIPTIONS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/prometheus_text.h"
#include "fetch/outcome.h"
#include "store/store_batch.h"
#include "store/subscription_table.h"

namespace freshd::daemon {

// Random bytes of a callback id and of a secret.
inline constexpr size_t kWebSubIdBytes = 16;      // 128 bits
inline constexpr size_t kWebSubSecretBytes = 32;  // 256 bits
// The renewal point, as a fraction of the lease granted.
inline constexpr double kWebSubRenewAt = 0.85;
// The path prefix of callbacks on the push listener.
inline constexpr std::string_view kWebSubPath = "/websub/";

class WebSubSubscriptions {
 public:
  enum class State : uint8_t {
    kSubscribing = 1,    // request sent or due; verification awaited
    kActive = 2,         // verified; lease_end set
    kUnsubscribing = 3,  // the feed was forgotten; verification awaited
    kDenied = 4,         // the hub denied it; retried later
    kFailed = 5,         // the last request failed; retried later
  };
  struct Options {
    std::string public_url;  // [push] public_url; empty: off
    size_t max_subscriptions = 1000;
    double lease_s = 864000;           // hub.lease_seconds asked (10 days)
    double min_renew_interval_s = 60;  // between two requests of one
    double verify_timeout_s = 300;     // request accepted, no verification
    double retry_base_s = 60;          // first retry after a failure
    double retry_max_s = 86400;        // retries double up to this
    double denied_retry_s = 86400;     // after hub.mode=denied
  };
  struct Hooks {
    // POSTs the form body to the hub; `done` on this thread.
    std::function<void(std::string url, std::string form,
                       std::function<void(fetch::FetchResult)> done)>
        post;
    // The feed's subscription became active (true) or stopped being (false).
    std::function<void(const std::string& feed_url, bool pushed)> set_pushed;
    // A verified delivery for the feed polled at `feed_url`.
    std::function<void(const std::string& feed_url, std::string body)> deliver;
    // Whether the cluster gives the feed's host to another node now
    // (ClusterAdapter::HostOwnedElsewhere; null: never). Such a feed is
    // neither subscribed (Discovered) nor kept (Tick: unsubscribed).
    std::function<bool(const std::string& feed_url)> elsewhere;
    std::function<void()> commit;  // records were marked
    std::function<double()> now;   // Unix seconds
  };
  struct Reply {
    int status = 200;
    std::string body;
  };

  WebSubSubscriptions(Options options, Hooks hooks);
  ~WebSubSubscriptions();
  WebSubSubscriptions(const WebSubSubscriptions&) = delete;
  WebSubSubscriptions& operator=(const WebSubSubscriptions&) = delete;

  bool enabled() const {
    return !options_.public_url.empty() && options_.max_subscriptions > 0;
  }

  // The stored subscriptions, before anything else; a record that no
  // longer fits (over max_subscriptions, unknown state) is dropped (and
  // deleted with the next commit). Returns how many were kept.
  size_t Restore(const std::vector<store::SubscriptionRecord>& records);

  // A feed polled at `feed_url` names these hubs (normalized http(s)) and
  // self URL ("" when none).
  void Discovered(const std::string& feed_url, const std::string& self_url,
                  const std::vector<std::string>& hubs);
  // The feed left the site feeds: unsubscribe.
  void Forget(const std::string& feed_url);

  // GET /websub/ID?QUERY (verification of intent, denial).
  Reply Verify(std::string_view id, std::string_view query);
  // POST /websub/ID (content distribution); `signature`: X-Hub-Signature.
  Reply Deliver(std::string_view id, std::string_view signature,
                std::string body);

  // Renewals, retries, timeouts, lease ends, ownership; call often (each
  // housekeeping turn): it does nothing when nothing is due.
  void Tick();

  bool marked() const { return !dirty_.empty(); }
  void TakeBatch(store::StoreBatch* batch);

  // A request for a callback ID not of the callback form (any thread).
  void NoteUnknownCallback() { Count(unknown_callbacks_); }

  // False once destroyed: read on its thread by what was posted there.
  const std::shared_ptr<bool>& alive() const { return alive_; }

  // /status "websub": {"enabled", "subscriptions", "active", "pending",
  // "unsubscribing", "denied", "failed", "requests", "renewals",
  // "verifications", "deliveries_accepted", "signature_failures",
  // "unknown_callbacks", "refused_full", "denied_total", "request_failures"}.
  nlohmann::json Json() const;
  void AppendMetrics(PrometheusText& out) const;

  // Whether `id` has the form of a callback id (32 lowercase hex).
  static bool WellFormedId(std::string_view id);
  // The verdict on a delivery: `signature` ("sha256=HEX", ...) against the
  // HMAC of `body` under `secret`. False for a missing or malformed
  // header, an unknown method, or a mismatch (constant-time compare).
  static bool SignatureMatches(std::string_view signature,
                               std::string_view secret, std::string_view body);

 private:
  struct Subscription {
    store::SubscriptionRecord record;
    bool in_flight = false;    // a request to the hub is on its way
    bool awaiting = false;     // a request sent, its verification awaited
    double last_request = -1;  // Unix s of the last request sent
  };
  State StateOf(const Subscription& s) const {
    return static_cast<State>(s.record.state);
  }
  void SetState(Subscription& s, State state);
  void Send(Subscription& s, bool subscribe);
  void RequestDone(const std::string& id, bool subscribe,
                   const fetch::FetchResult& r);
  void Failed(Subscription& s);
  void Drop(std::string id);  // a copy: the key may be the map's
  void Mark(const std::string& id) { dirty_.insert(id); }
  bool Elsewhere(const std::string& feed_url) const {
    return hooks_.elsewhere && hooks_.elsewhere(feed_url);
  }
  void PublishCounts();
  void Count(std::atomic<uint64_t>& c) {
    c.fetch_add(1, std::memory_order_relaxed);
  }
  std::string RandomHex(size_t bytes) const;
  std::string Callback(const std::string& id) const;

  const Options options_;
  const Hooks hooks_;
  std::map<std::string, Subscription, std::less<>> subs_;    // by callback id
  std::map<std::string, std::string, std::less<>> by_feed_;  // feed -> id
  std::set<std::string> dirty_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  std::atomic<uint64_t> requests_{0}, renewals_{0}, verifications_{0},
      accepted_{0}, signature_failures_{0}, unknown_callbacks_{0},
      refused_full_{0}, denied_total_{0}, request_failures_{0};
  // Counts by state, published after each change (status thread reads).
  std::atomic<uint64_t> by_state_[6] = {};
};

const char* WebSubStateName(WebSubSubscriptions::State state);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_WEBSUB_SUBSCRIPTIONS_H_

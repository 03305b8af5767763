// SubscriptionTable: the WebSub subscriptions (daemon/websub_subscriptions.h)
// as stored: key 'U' + callback id (store/keys.h), value
// EncodeSubscriptionValue below. Read side only: written through
// StoreBatch::PutSubscription / DeleteSubscription with the engine's group
// commit. A store without the prefix (every store before WebSub) simply has
// none, so the schema version stays as it is and no migration is needed; an
// older freshd ignores the keys (it reads only the prefixes it knows).
// The value holds the subscription's HMAC secret: the store's directory is
// the daemon's own (store/README.md), as the hash secret 'K' already is.
// Thread-safety: the store's rule, store/store_core.h.

#ifndef FRESHD_STORE_SUBSCRIPTION_TABLE_H_
#define FRESHD_STORE_SUBSCRIPTION_TABLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/store_core.h"

namespace freshd::store {

// Longest callback id, URL and secret a record may hold.
inline constexpr size_t kMaxSubscriptionIdBytes = 64;
inline constexpr size_t kMaxSubscriptionUrlBytes = 8192;
inline constexpr size_t kMaxSubscriptionSecretBytes = 199;  // WebSub §5.1

struct SubscriptionRecord {
  std::string id;             // the callback id (hex), the key
  std::string feed_url;       // the feed as polled
  std::string topic;          // hub.topic (the feed's self URL, else feed_url)
  std::string hub;            // the hub's URL
  std::string secret;         // hub.secret
  uint8_t state = 0;          // daemon/websub_subscriptions.h's State
  double lease_end_unix = 0;  // 0: no lease verified
  double next_action_unix = 0;  // renewal, retry or verification deadline
  uint32_t failures = 0;        // in a row
};

// Version byte 1, then the fields in order (length-prefixed strings, one
// state byte, IEEE doubles, a varint). Decode: Corruption for anything
// else or over the bounds above.
std::string EncodeSubscriptionValue(const SubscriptionRecord& record);
[[nodiscard]] Status DecodeSubscriptionValue(std::string_view value,
                                             SubscriptionRecord* record);

class SubscriptionTable {
 public:
  explicit SubscriptionTable(const StoreCore* core) : core_(core) {}

  // Every subscription in key order; a record that does not decode is
  // Corruption (with skip_corrupt: skipped). IOError from LevelDB.
  [[nodiscard]] Status ForEach(
      const std::function<bool(const SubscriptionRecord&)>& fn,
      bool skip_corrupt = false) const;

 private:
  const StoreCore* core_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_SUBSCRIPTION_TABLE_H_

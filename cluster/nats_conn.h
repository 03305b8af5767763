// The NATS connection every cluster component opens alike: one URL (or a
// comma-separated list), reconnecting forever, a stream created if
// missing, and the text of a libnats error. Thread-safety: free functions, safe
// from any thread.

#ifndef FRESHD_CLUSTER_NATS_CONN_H_
#define FRESHD_CLUSTER_NATS_CONN_H_

#include <nats/nats.h>

#include <string>

namespace freshd::cluster {

inline constexpr int64_t kConnectTimeoutMs = 2000;
inline constexpr int64_t kReconnectWaitMs = 250;

// Connects to `url` as client `name` (shown by the server), with reconnects
// forever every kReconnectWaitMs. On success *nc is the caller's.
natsStatus ConnectNats(const std::string& url, const std::string& name,
                       natsConnection** nc);
// The stream `cfg` describes, created if missing; a stream that exists
// (made by another node, maybe with other limits) is bound as it is.
natsStatus EnsureStream(jsCtx* js, jsStreamConfig* cfg);
// True while `nc` (may be null) is connected.
bool NatsConnected(natsConnection* nc);
// Seconds on the steady clock (the cluster threads' timers).
double MonotonicSeconds();
// `s` as text, with libnats' last error detail when it has one.
std::string NatsError(natsStatus s);

}  // namespace freshd::cluster

#endif  // FRESHD_CLUSTER_NATS_CONN_H_

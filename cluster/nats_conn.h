// The NATS connection every cluster component opens alike: one URL (or a
// comma-separated list), reconnecting forever, a stream created if
// missing, and the text of a libnats error. Thread-safety: free functions, safe
// from any thread.

#ifndef FRESHD_CLUSTER_NATS_CONN_H_
#define FRESHD_CLUSTER_NATS_CONN_H_

#include <nats/nats.h>

#include <functional>
#include <memory>
#include <string>

namespace freshd::cluster {

inline constexpr int64_t kConnectTimeoutMs = 2000;
inline constexpr int64_t kReconnectWaitMs = 250;
inline constexpr int64_t kReadyProbeWaitMs = 500;

// Connects to `url` as client `name` (shown by the server), with reconnects
// forever every kReconnectWaitMs; with `reconnect` false the connection
// closes for good when lost (nothing written meanwhile is replayed on a
// later one; the caller connects again). On success *nc is the caller's.
natsStatus ConnectNats(const std::string& url, const std::string& name,
                       natsConnection** nc, bool reconnect = true);
// The stream `cfg` describes, created if missing; a stream that exists
// (made by another node, maybe with other limits) is bound as it is. Returns
// once the stream is ready (WaitStreamReady on its first subject).
natsStatus EnsureStream(jsCtx* js, jsStreamConfig* cfg);
// Waits, at most kConnectTimeoutMs, until the stream holding `subject`
// answers a publish (one it must refuse, so nothing is stored). Why: the
// nats-server of Debian 12 (2.9.10) lists a stream before its store exists,
// and a message get in that window crashes the server (nil store in
// jsMsgGetRequest); a node that finds a stream another node is creating
// must not read it yet. The stream subscribes its subjects only once its
// store is set up, so an answer proves it ready.
natsStatus WaitStreamReady(jsCtx* js, const std::string& subject);
// A concrete subject under `subjects` (each wildcard token replaced).
std::string ReadyProbeSubject(const std::string& subjects);
// True while `nc` (may be null) is connected.
bool NatsConnected(natsConnection* nc);
// One turn of a cluster thread's connection upkeep: a connection closed
// for good is dropped (`nats` reset; NatsT holds it as `nc`); with none,
// once *next_connect has passed, connect() is tried (it sets `nats`), and
// if it fails the next try is a second later. Returns whether connected.
bool UpkeepConnection(natsConnection* nc, const std::function<void()>& drop,
                      const std::function<bool()>& connect,
                      double* next_connect);
template <typename NatsT>
bool UpkeepConnection(std::unique_ptr<NatsT>& nats,
                      const std::function<bool()>& connect,
                      double* next_connect) {
  return UpkeepConnection(
      nats != nullptr ? nats->nc : nullptr, [&nats] { nats.reset(); },
      [&] { return connect() && nats != nullptr && NatsConnected(nats->nc); },
      next_connect);
}
// A stopping thread's last publishes: publish() (false: it failed) runs
// while pending() and connected(), at most `seconds`.
void FlushBeforeStop(double seconds, const std::function<bool()>& connected,
                     const std::function<bool()>& pending,
                     const std::function<bool()>& publish);
// `s` as text, with libnats' last error detail when it has one.
std::string NatsError(natsStatus s);

}  // namespace freshd::cluster

#endif  // FRESHD_CLUSTER_NATS_CONN_H_

#include "cluster/nats_conn.h"

#include <chrono>

#include "base/clock.h"

namespace freshd::cluster {

natsStatus ConnectNats(const std::string& url, const std::string& name,
                       natsConnection** nc, bool reconnect) {
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, url.c_str());
  if (s == NATS_OK) s = natsOptions_SetName(opts, name.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, kConnectTimeoutMs);
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, reconnect);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, kReconnectWaitMs);
  if (s == NATS_OK) s = natsConnection_Connect(nc, opts);
  if (opts != nullptr) natsOptions_Destroy(opts);
  return s;
}

natsStatus EnsureStream(jsCtx* js, jsStreamConfig* cfg) {
  jsStreamInfo* si = nullptr;
  natsStatus s = js_GetStreamInfo(&si, js, cfg->Name, nullptr, nullptr);
  if (s != NATS_OK) {
    s = js_AddStream(&si, js, cfg, nullptr, nullptr);
    if (s != NATS_OK) {  // another node created it meanwhile
      s = js_GetStreamInfo(&si, js, cfg->Name, nullptr, nullptr);
    }
  }
  if (si != nullptr) jsStreamInfo_Destroy(si);
  return s;
}

bool NatsConnected(natsConnection* nc) {
  return nc != nullptr &&
         natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED;
}

bool UpkeepConnection(natsConnection* nc, const std::function<void()>& drop,
                      const std::function<bool()>& connect,
                      double* next_connect) {
  if (nc != nullptr && natsConnection_Status(nc) == NATS_CONN_STATUS_CLOSED) {
    drop();
    nc = nullptr;
  }
  if (nc != nullptr) return NatsConnected(nc);
  const double now = SteadyNow();
  if (now < *next_connect) return false;
  if (connect()) return true;
  *next_connect = now + 1;
  return false;
}

void FlushBeforeStop(double seconds, const std::function<bool()>& connected,
                     const std::function<bool()>& pending,
                     const std::function<bool()>& publish) {
  const double until = SteadyNow() + seconds;
  while (SteadyNow() < until && connected() && pending()) {
    if (!publish()) break;
  }
}

std::string NatsError(natsStatus s) {
  natsStatus last = NATS_OK;
  const char* text = nats_GetLastError(&last);
  std::string out = natsStatus_GetText(s);
  if (text != nullptr && *text != '\0') out += std::string(": ") + text;
  return out;
}

}  // namespace freshd::cluster

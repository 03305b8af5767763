#include "cluster/nats_conn.h"

#include <chrono>

namespace freshd::cluster {

natsStatus ConnectNats(const std::string& url, const std::string& name,
                       natsConnection** nc) {
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, url.c_str());
  if (s == NATS_OK) s = natsOptions_SetName(opts, name.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, kConnectTimeoutMs);
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, true);
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

double MonotonicSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string NatsError(natsStatus s) {
  natsStatus last = NATS_OK;
  const char* text = nats_GetLastError(&last);
  std::string out = natsStatus_GetText(s);
  if (text != nullptr && *text != '\0') out += std::string(": ") + text;
  return out;
}

}  // namespace freshd::cluster

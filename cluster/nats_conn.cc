#include "cluster/nats_conn.h"

#include <chrono>
#include <cstdint>
#include <thread>

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

natsStatus WaitStreamReady(jsCtx* js, const std::string& subject) {
  // A publish the stream must refuse: no stream's last sequence is the
  // largest uint64. The refusal proves the stream stores and answers; no
  // responder means it is still being made.
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.ExpectLastSeq = UINT64_MAX;
  po.MaxWait = kReadyProbeWaitMs;
  const double until = SteadyNow() + kConnectTimeoutMs / 1000.0;
  for (;;) {
    jsErrCode jerr = static_cast<jsErrCode>(0);
    jsPubAck* ack = nullptr;
    natsStatus s = js_Publish(&ack, js, subject.c_str(), "", 0, &po, &jerr);
    if (ack != nullptr) jsPubAck_Destroy(ack);
    if (s == NATS_OK || jerr == JSStreamWrongLastSequenceErr) {
      return NATS_OK;
    }
    if (s != NATS_NO_RESPONDERS && s != NATS_TIMEOUT) return s;
    if (SteadyNow() >= until) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string ReadyProbeSubject(const std::string& subjects) {
  std::string out;
  size_t start = 0;
  while (start <= subjects.size()) {
    size_t end = subjects.find('.', start);
    if (end == std::string::npos) end = subjects.size();
    const std::string token = subjects.substr(start, end - start);
    if (!out.empty()) out += '.';
    out += token == "*" || token == ">" ? "_freshd_ready" : token;
    start = end + 1;
  }
  return out;
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
  if (s == NATS_OK && cfg->SubjectsLen > 0) {
    s = WaitStreamReady(js, ReadyProbeSubject(cfg->Subjects[0]));
  }
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

#include "cluster/member_list.h"

#include <nats/nats.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "base/clock.h"
#include "cluster/cluster_node.h"

namespace freshd::cluster {
namespace {

struct Handles {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  kvStore* kv = nullptr;
  ~Handles() {
    if (kv != nullptr) kvStore_Destroy(kv);
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
};

}  // namespace

Result<std::vector<ListedMember>> ListMembers(const std::string& nats_url,
                                              const std::string& bucket,
                                              double timeout_s) {
  const auto ms = static_cast<int64_t>(std::max(0.001, timeout_s) * 1000);
  Handles h;
  natsOptions* opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, nats_url.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, ms);
  if (s == NATS_OK) s = natsConnection_Connect(&h.nc, opts);
  if (opts != nullptr) natsOptions_Destroy(opts);
  jsOptions jo;
  if (s == NATS_OK) s = jsOptions_Init(&jo);
  jo.Wait = ms;
  if (s == NATS_OK) s = natsConnection_JetStream(&h.js, h.nc, &jo);
  if (s != NATS_OK) {
    return Status::IOError("cannot reach NATS at " + nats_url + ": " +
                           natsStatus_GetText(s));
  }
  s = js_KeyValue(&h.kv, h.js, bucket.c_str());
  if (s != NATS_OK) {
    return Status::NotFound("no bucket " + bucket + " at " + nats_url +
                            " (no node has joined): " + natsStatus_GetText(s));
  }
  kvKeysList keys{};
  kvWatchOptions wo;
  kvWatchOptions_Init(&wo);
  wo.Timeout = ms;
  s = kvStore_Keys(&keys, h.kv, &wo);
  std::vector<ListedMember> out;
  if (s == NATS_NOT_FOUND) return out;  // an empty bucket
  if (s != NATS_OK) {
    return Status::IOError(std::string("cannot list members: ") +
                           natsStatus_GetText(s));
  }
  // The library's key list can name a key more than once (a heartbeat
  // written while the list was read arrives as another entry): each key's
  // latest value once.
  std::set<std::string> unique_keys;
  for (int i = 0; i < keys.Count; ++i) unique_keys.insert(keys.Keys[i]);
  kvKeysList_Destroy(&keys);
  const double now = UnixNow();
  for (const std::string& key : unique_keys) {
    kvEntry* e = nullptr;
    if (kvStore_Get(&e, h.kv, key.c_str()) != NATS_OK) continue;
    ListedMember m;
    uint64_t instance = 0;
    const std::string_view value(
        static_cast<const char*>(kvEntry_Value(e)),
        static_cast<size_t>(std::max(0, kvEntry_ValueLen(e))));
    if (DecodeMember(kvEntry_Key(e), value, &m.info, &instance)) {
      m.age_s = now - static_cast<double>(kvEntry_Created(e)) / 1e9;
      out.push_back(std::move(m));
    }
    kvEntry_Destroy(e);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.info.node < b.info.node;
  });
  return out;
}

}  // namespace freshd::cluster

#include "daemon/fetch_state.h"

#include <cmath>
#include <map>

#include "base/coding.h"
#include "fetch/crawler.h"
#include "parse/url.h"

namespace freshd::daemon {
namespace {

constexpr uint8_t kVersion = 1;
constexpr size_t kMaxTextBytes = 512 * 1024;  // robots bodies are <= 500 KiB
constexpr size_t kMaxNameBytes = 8 * 1024;

Status Bad(const char* what) {
  return Status::Corruption(std::string("fetch state: bad ") + what);
}

void PutOptionalDouble(std::string* out, const std::optional<double>& v) {
  out->push_back(v ? 1 : 0);
  if (v) PutDouble(out, *v);
}

bool GetOptionalDouble(Decoder& d, std::optional<double>* v) {
  uint8_t present = 0;
  if (!d.GetByte(&present) || present > 1) return false;
  if (present == 0) {
    v->reset();
    return true;
  }
  double x = 0;
  if (!d.GetDouble(&x) || !std::isfinite(x)) return false;
  *v = x;
  return true;
}

bool GetTime(Decoder& d, double* v) {
  return d.GetDouble(v) && !std::isnan(*v);  // +inf allowed ("never")
}

}  // namespace

std::string EncodeHostFetchState(const HostFetchState& s) {
  std::string out;
  out.push_back(static_cast<char>(kVersion));
  out.push_back(s.gate ? 1 : 0);
  if (s.gate) {
    const fetch::GateHostSnapshot& g = *s.gate;
    PutLengthPrefixed(&out, g.host);
    PutDouble(&out, g.next_allowed);
    PutDouble(&out, g.last_response_s);
    PutVarint64(&out, static_cast<uint64_t>(std::max(0, g.consecutive_errors)));
    PutOptionalDouble(&out, g.crawl_delay_s);
  }
  size_t n = std::min(s.robots.size(), kMaxOrigins);
  PutVarint64(&out, n);
  for (size_t i = 0; i < n; ++i) {
    const fetch::RobotsSnapshot& r = s.robots[i];
    PutLengthPrefixed(&out, r.origin);
    out.push_back(static_cast<char>(r.mode));
    PutVarint64(&out, static_cast<uint32_t>(r.status));
    PutDouble(&out, r.fetched_at);
    PutDouble(&out, r.expires);
    PutLengthPrefixed(&out, r.body.substr(0, kMaxTextBytes));
    PutLengthPrefixed(&out, r.final_url.substr(0, kMaxNameBytes));
    out.push_back(r.has_rules ? 1 : 0);
    PutOptionalDouble(&out, r.unreachable_since);
    PutVarint64(&out, static_cast<uint64_t>(std::max(0, r.failures)));
    PutLengthPrefixed(&out, r.last_failure.substr(0, kMaxNameBytes));
  }
  return out;
}

Result<HostFetchState> DecodeHostFetchState(std::string_view bytes) {
  Decoder d(bytes);
  uint8_t version = 0, has_gate = 0;
  if (!d.GetByte(&version) || version != kVersion) return Bad("version");
  if (!d.GetByte(&has_gate) || has_gate > 1) return Bad("gate flag");
  HostFetchState s;
  if (has_gate) {
    fetch::GateHostSnapshot g;
    uint32_t errors = 0;
    if (!d.GetLengthPrefixed(&g.host, kMaxNameBytes)) return Bad("gate host");
    if (!GetTime(d, &g.next_allowed)) return Bad("next_allowed");
    if (!d.GetDouble(&g.last_response_s) || !std::isfinite(g.last_response_s) ||
        g.last_response_s < 0) {
      return Bad("last_response_s");
    }
    if (!d.GetVarint32(&errors) || errors > 1'000'000) return Bad("errors");
    g.consecutive_errors = static_cast<int>(errors);
    if (!GetOptionalDouble(d, &g.crawl_delay_s)) return Bad("crawl_delay");
    s.gate = std::move(g);
  }
  uint64_t n = 0;
  if (!d.GetVarint64(&n) || n > kMaxOrigins) return Bad("robots count");
  for (uint64_t i = 0; i < n; ++i) {
    fetch::RobotsSnapshot r;
    uint8_t mode = 0, has_rules = 0;
    uint32_t status = 0, failures = 0;
    if (!d.GetLengthPrefixed(&r.origin, kMaxNameBytes)) return Bad("origin");
    if (!d.GetByte(&mode) || mode > 2) return Bad("robots mode");
    r.mode = static_cast<fetch::RobotsSnapshot::Mode>(mode);
    if (!d.GetVarint32(&status)) return Bad("robots status");
    r.status = static_cast<int>(status);
    if (!GetTime(d, &r.fetched_at) || !GetTime(d, &r.expires)) {
      return Bad("robots times");
    }
    if (!d.GetLengthPrefixed(&r.body, kMaxTextBytes)) return Bad("robots body");
    if (!d.GetLengthPrefixed(&r.final_url, kMaxNameBytes)) {
      return Bad("robots final_url");
    }
    if (!d.GetByte(&has_rules) || has_rules > 1) return Bad("has_rules");
    r.has_rules = has_rules == 1;
    if (!GetOptionalDouble(d, &r.unreachable_since)) {
      return Bad("unreachable_since");
    }
    if (!d.GetVarint32(&failures) || failures > 1'000'000) {
      return Bad("robots failures");
    }
    r.failures = static_cast<int>(failures);
    if (!d.GetLengthPrefixed(&r.last_failure, kMaxNameBytes)) {
      return Bad("last_failure");
    }
    s.robots.push_back(std::move(r));
  }
  if (!d.done()) return Bad("length (trailing bytes)");
  return s;
}

std::vector<std::pair<std::string, HostFetchState>> GroupByHost(
    const fetch::CrawlerState& state) {
  std::map<std::string, HostFetchState> by_host;
  for (const auto& g : state.hosts) by_host[g.host].gate = g;
  for (const auto& r : state.robots) {
    std::string authority(parse::UrlAuthority(r.origin + "/"));
    HostFetchState& h = by_host[authority];
    if (h.robots.size() < kMaxOrigins) h.robots.push_back(r);
  }
  return {by_host.begin(), by_host.end()};
}

}  // namespace freshd::daemon

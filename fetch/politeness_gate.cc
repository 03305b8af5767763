#include "fetch/politeness_gate.h"

#include <algorithm>
#include <cmath>

namespace freshd::fetch {

PolitenessGate::PolitenessGate(const PolitenessConfig& config)
    : config_(config) {}

PolitenessGate::Host& PolitenessGate::Get(std::string_view host) {
  return hosts_[std::string(host)];
}

const PolitenessGate::Host* PolitenessGate::Find(std::string_view host) const {
  auto it = hosts_.find(std::string(host));
  return it == hosts_.end() ? nullptr : &it->second;
}

double PolitenessGate::Spacing(const Host& h) const {
  double delay = config_.min_delay_s;
  if (h.crawl_delay_s) {
    delay =
        std::max(delay, std::min(*h.crawl_delay_s, config_.max_crawl_delay_s));
  }
  delay = std::max(delay, config_.adaptive_delay_factor * h.last_response_s);
  return delay;
}

const PolitenessGate::Ip* PolitenessGate::FindIp(const Host* h) const {
  if (h == nullptr || h->ip.empty()) return nullptr;
  auto it = ips_.find(h->ip);
  return it == ips_.end() ? nullptr : &it->second;
}

double PolitenessGate::NextAllowed(std::string_view host, double now) const {
  const Host* h = Find(host);
  if (h == nullptr) return std::max(now, hold_until_);
  double at = std::max({now, hold_until_, h->next_allowed});
  if (const Ip* ip = FindIp(h)) at = std::max(at, ip->next_allowed);
  return at;
}

bool PolitenessGate::AtInFlightLimit(std::string_view host) const {
  const Host* h = Find(host);
  int limit = config_.max_in_flight_per_host;
  if (h == nullptr) return limit <= 0;
  const Ip* ip = FindIp(h);
  return h->in_flight >= limit || (ip != nullptr && ip->in_flight >= limit);
}

bool PolitenessGate::MayStart(std::string_view host, double now) const {
  const Host* h = Find(host);
  if (h != nullptr && h->unsent > 0) return false;
  return !AtInFlightLimit(host) && NextAllowed(host, now) <= now;
}

void PolitenessGate::OnStart(std::string_view host, double now) {
  Host& h = Get(host);
  ++h.in_flight;
  h.next_allowed = std::max(h.next_allowed, now + Spacing(h));
  if (!h.ip.empty()) {
    Ip& ip = ips_[h.ip];
    ++ip.in_flight;
    ip.next_allowed = std::max(ip.next_allowed, now + Spacing(h));
  }
}

void PolitenessGate::AwaitSent(std::string_view host) { ++Get(host).unsent; }

void PolitenessGate::OnSent(std::string_view host, double now) {
  Host& h = Get(host);
  if (h.unsent > 0) --h.unsent;
  h.next_allowed = std::max(h.next_allowed, now + Spacing(h));
  if (!h.ip.empty()) {
    Ip& ip = ips_[h.ip];
    ip.next_allowed = std::max(ip.next_allowed, now + Spacing(h));
  }
}

void PolitenessGate::OnFinish(std::string_view host, double now,
                              OutcomeClass outcome, int http_status,
                              double response_time_s,
                              std::optional<double> retry_after_s) {
  Host& h = Get(host);
  if (h.in_flight > 0) --h.in_flight;
  if (std::isfinite(response_time_s) && response_time_s >= 0) {
    h.last_response_s = response_time_s;
  }
  double wait = Spacing(h);
  if (IsHostError(outcome, http_status)) {
    ++h.errors;
    // backoff_initial * 2^(errors-1), computed without overflow.
    double backoff = config_.backoff_initial_s;
    for (int i = 1; i < h.errors && backoff < config_.backoff_max_s; ++i) {
      backoff *= 2;
    }
    backoff = std::min(backoff, config_.backoff_max_s);
    wait = std::max(wait, backoff);
  } else if (outcome != OutcomeClass::kRobotsDenied) {
    h.errors = 0;
  }
  if (retry_after_s && (http_status == 429 || http_status == 503) &&
      std::isfinite(*retry_after_s) && *retry_after_s >= 0) {
    // Retry-After is the server's explicit wish: it replaces the computed
    // back-off (even an earlier, longer one) but never the spacing delay.
    double ra = std::min(*retry_after_s, config_.backoff_max_s);
    h.next_allowed = now + std::max(Spacing(h), ra);
  } else {
    h.next_allowed = std::max(h.next_allowed, now + wait);
  }
  if (!h.ip.empty()) {
    Ip& ip = ips_[h.ip];
    if (ip.in_flight > 0) --ip.in_flight;
    ip.next_allowed = std::max(ip.next_allowed, h.next_allowed);
  }
}

void PolitenessGate::SetAddress(std::string_view host, std::string_view ip) {
  if (!config_.per_ip) return;
  Host& h = Get(host);
  if (h.in_flight > 0) return;
  h.ip = std::string(ip);
}

std::string PolitenessGate::Address(std::string_view host) const {
  const Host* h = Find(host);
  return h == nullptr ? "" : h->ip;
}

void PolitenessGate::SetCrawlDelay(std::string_view host,
                                   std::optional<double> delay_s) {
  Host& h = Get(host);
  if (delay_s && (!std::isfinite(*delay_s) || *delay_s < 0)) return;
  h.crawl_delay_s = delay_s;
}

int PolitenessGate::InFlight(std::string_view host) const {
  const Host* h = Find(host);
  return h == nullptr ? 0 : h->in_flight;
}

int PolitenessGate::ConsecutiveErrors(std::string_view host) const {
  const Host* h = Find(host);
  return h == nullptr ? 0 : h->errors;
}

double PolitenessGate::SpacingDelay(std::string_view host) const {
  const Host* h = Find(host);
  return h == nullptr ? Spacing(Host{}) : Spacing(*h);
}

size_t PolitenessGate::PruneIdle(double now) {
  for (auto it = ips_.begin(); it != ips_.end();) {
    if (it->second.in_flight == 0 && it->second.next_allowed <= now) {
      it = ips_.erase(it);
    } else {
      ++it;
    }
  }
  size_t dropped = 0;
  for (auto it = hosts_.begin(); it != hosts_.end();) {
    const Host& h = it->second;
    if (h.in_flight == 0 && h.errors == 0 && h.next_allowed <= now &&
        !h.crawl_delay_s) {
      it = hosts_.erase(it);
      ++dropped;
    } else {
      ++it;
    }
  }
  return dropped;
}

std::vector<GateHostSnapshot> PolitenessGate::Export() const {
  std::vector<GateHostSnapshot> out;
  for (const auto& [name, h] : hosts_) out.push_back(Snapshot(name, h));
  std::sort(out.begin(), out.end(),
            [](const GateHostSnapshot& a, const GateHostSnapshot& b) {
              return a.host < b.host;
            });
  return out;
}

std::vector<GateHostSnapshot> PolitenessGate::Export(
    const std::vector<std::string>& hosts) const {
  std::vector<GateHostSnapshot> out;
  for (const std::string& name : hosts) {
    if (const Host* h = Find(name)) out.push_back(Snapshot(name, *h));
  }
  return out;
}

GateHostSnapshot PolitenessGate::Snapshot(const std::string& name,
                                          const Host& h) {
  GateHostSnapshot s;
  s.host = name;
  s.next_allowed = h.next_allowed;
  s.last_response_s = h.last_response_s;
  s.consecutive_errors = h.errors;
  s.crawl_delay_s = h.crawl_delay_s;
  return s;
}

void PolitenessGate::Import(const std::vector<GateHostSnapshot>& hosts) {
  auto finite_or = [](double v, double fallback) {
    return std::isfinite(v) && v >= 0 ? v : fallback;
  };
  for (const GateHostSnapshot& s : hosts) {
    Host& h = Get(s.host);
    h.next_allowed = finite_or(s.next_allowed, 0);
    h.last_response_s = finite_or(s.last_response_s, 0);
    h.errors = std::max(0, s.consecutive_errors);
    h.crawl_delay_s.reset();
    if (s.crawl_delay_s && std::isfinite(*s.crawl_delay_s) &&
        *s.crawl_delay_s >= 0) {
      h.crawl_delay_s = s.crawl_delay_s;
    }
  }
}

void ShiftTimes(std::vector<GateHostSnapshot>* hosts, double delta) {
  for (GateHostSnapshot& s : *hosts) {
    if (s.next_allowed > 0) s.next_allowed += delta;
  }
}

}  // namespace freshd::fetch

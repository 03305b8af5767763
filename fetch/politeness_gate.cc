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

double PolitenessGate::NextAllowed(std::string_view host, double now) const {
  const Host* h = Find(host);
  if (h == nullptr) return now;
  return std::max(now, h->next_allowed);
}

bool PolitenessGate::MayStart(std::string_view host, double now) const {
  const Host* h = Find(host);
  if (h == nullptr) return config_.max_in_flight_per_host > 0;
  return h->in_flight < config_.max_in_flight_per_host &&
         h->next_allowed <= now;
}

void PolitenessGate::OnStart(std::string_view host, double now) {
  Host& h = Get(host);
  ++h.in_flight;
  h.next_allowed = std::max(h.next_allowed, now + Spacing(h));
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
    return;
  }
  h.next_allowed = std::max(h.next_allowed, now + wait);
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

}  // namespace freshd::fetch

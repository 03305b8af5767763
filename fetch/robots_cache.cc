#include "fetch/robots_cache.h"

#include <algorithm>

namespace freshd::fetch {

RobotsCache::RobotsCache(const PolitenessConfig& config,
                         std::string product_token)
    : config_(config), token_(std::move(product_token)) {}

RobotsCache::Verdict RobotsCache::Check(std::string_view origin,
                                        std::string_view path_and_query,
                                        double now) const {
  auto it = entries_.find(std::string(origin));
  if (it == entries_.end() || it->second.expires <= now) {
    return Verdict::kFetchRobots;
  }
  return CheckCached(origin, path_and_query);
}

RobotsCache::Verdict RobotsCache::CheckCached(
    std::string_view origin, std::string_view path_and_query) const {
  auto it = entries_.find(std::string(origin));
  if (it == entries_.end()) return Verdict::kFetchRobots;
  const Entry& e = it->second;
  switch (e.mode) {
    case Mode::kAllowAll:
      return Verdict::kAllowed;
    case Mode::kDisallowAll:
      return Verdict::kDisallowed;
    case Mode::kRules:
      return e.rules.IsAllowed(token_, path_and_query) ? Verdict::kAllowed
                                                       : Verdict::kDisallowed;
  }
  return Verdict::kDisallowed;
}

void RobotsCache::Record(std::string_view origin, const FetchResult& r,
                         double now) {
  if (r.outcome == OutcomeClass::kBlockedAddress ||
      r.outcome == OutcomeClass::kBadUrl ||
      r.outcome == OutcomeClass::kProxy) {  // the host was never asked
    return;
  }
  Entry& e = entries_[std::string(origin)];
  e.status = r.status;
  e.fetched_at = now;
  bool success = r.outcome == OutcomeClass::kOk;
  bool unavailable =
      (r.outcome == OutcomeClass::kHttp4xx && r.status != 429) ||
      r.outcome == OutcomeClass::kRedirectLoop ||
      r.outcome == OutcomeClass::kBadRedirect ||
      r.outcome == OutcomeClass::kNotModified;  // never asked: treat as 4xx
  if (success) {
    e.mode = Mode::kRules;
    e.rules = parse::ParseRobotsTxt(r.body);
    e.has_rules = true;
    e.body = r.body.substr(0, parse::kMaxRobotsBytes);
    e.final_url = r.final_url;
    e.sitemaps = e.rules.ResolvedSitemaps(r.final_url);
    e.expires = now + config_.robots_cache_s;
    e.unreachable_since.reset();
    e.failures = 0;
    return;
  }
  if (unavailable) {
    e.mode = Mode::kAllowAll;
    e.has_rules = false;
    e.body.clear();
    e.final_url.clear();
    e.sitemaps.clear();
    e.expires = now + config_.robots_cache_s;
    e.unreachable_since.reset();
    e.failures = 0;
    return;
  }
  // Unreachable: 429, 5xx, transport errors, anything else unexpected.
  if (!e.unreachable_since) e.unreachable_since = now;
  e.last_failure = std::string(OutcomeName(r.outcome));
  if (r.status != 0) e.last_failure += " " + std::to_string(r.status);
  ++e.failures;
  double backoff = config_.backoff_initial_s;
  for (int i = 1; i < e.failures && backoff < config_.backoff_max_s; ++i) {
    backoff *= 2;
  }
  backoff = std::min(backoff, config_.backoff_max_s);
  e.expires = now + backoff;
  if (now - *e.unreachable_since >= kRobotsUnreachableAllowAfterS) {
    e.mode = Mode::kAllowAll;  // §2.3.1.4: may be treated as unavailable
  } else {
    e.mode = e.has_rules ? Mode::kRules : Mode::kDisallowAll;
  }
}

std::string RobotsCache::DisallowAllReason(std::string_view origin) const {
  auto it = entries_.find(std::string(origin));
  if (it == entries_.end() || it->second.mode != Mode::kDisallowAll) return "";
  return "robots.txt of " + std::string(origin) + " unreachable (" +
         it->second.last_failure +
         "): everything disallowed until it can be fetched (RFC 9309 "
         "2.3.1.4)";
}

std::optional<double> RobotsCache::CrawlDelay(std::string_view origin) const {
  auto it = entries_.find(std::string(origin));
  if (it == entries_.end() || it->second.mode != Mode::kRules) {
    return std::nullopt;
  }
  return it->second.rules.CrawlDelay(token_);
}

std::vector<std::string> RobotsCache::Sitemaps(std::string_view origin) const {
  auto it = entries_.find(std::string(origin));
  return it == entries_.end() ? std::vector<std::string>{}
                              : it->second.sitemaps;
}

size_t RobotsCache::PruneExpired(double now) {
  size_t n = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    // Entries tracking an unreachable host keep their 30-day clock.
    if (it->second.expires <= now && !it->second.unreachable_since) {
      it = entries_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

std::vector<RobotsSnapshot> RobotsCache::Export() const {
  std::vector<RobotsSnapshot> out;
  out.reserve(entries_.size());
  for (const auto& [origin, e] : entries_) out.push_back(Snapshot(origin, e));
  std::sort(out.begin(), out.end(),
            [](const RobotsSnapshot& a, const RobotsSnapshot& b) {
              return a.origin < b.origin;
            });
  return out;
}

std::vector<RobotsSnapshot> RobotsCache::Export(
    const std::vector<std::string>& origins) const {
  std::vector<RobotsSnapshot> out;
  for (const std::string& origin : origins) {
    auto it = entries_.find(origin);
    if (it != entries_.end()) out.push_back(Snapshot(origin, it->second));
  }
  return out;
}

RobotsSnapshot RobotsCache::Snapshot(const std::string& origin,
                                     const Entry& e) {
  RobotsSnapshot s;
  s.origin = origin;
  s.mode = e.mode;
  s.status = e.status;
  s.fetched_at = e.fetched_at;
  s.expires = e.expires;
  s.body = e.body;
  s.final_url = e.final_url;
  s.has_rules = e.has_rules;
  s.unreachable_since = e.unreachable_since;
  s.failures = e.failures;
  s.last_failure = e.last_failure;
  return s;
}

void RobotsCache::Import(const std::vector<RobotsSnapshot>& entries) {
  for (const RobotsSnapshot& s : entries) {
    Entry e;
    e.has_rules = s.has_rules;
    e.mode = s.mode;
    if (e.mode == Mode::kRules && !e.has_rules) e.mode = Mode::kDisallowAll;
    if (e.has_rules) {
      e.body = s.body.substr(0, parse::kMaxRobotsBytes);
      e.final_url = s.final_url;
      e.rules = parse::ParseRobotsTxt(e.body);
      e.sitemaps = e.rules.ResolvedSitemaps(
          s.final_url.empty() ? s.origin + "/robots.txt" : s.final_url);
    }
    e.status = s.status;
    e.fetched_at = s.fetched_at;
    e.expires = s.expires;
    e.unreachable_since = s.unreachable_since;
    e.failures = std::max(0, s.failures);
    e.last_failure = s.last_failure;
    entries_[s.origin] = std::move(e);
  }
}

void ShiftTimes(std::vector<RobotsSnapshot>* entries, double delta) {
  for (RobotsSnapshot& s : *entries) {
    s.fetched_at += delta;
    s.expires += delta;
    if (s.unreachable_since) *s.unreachable_since += delta;
  }
}

}  // namespace freshd::fetch

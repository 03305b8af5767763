#include "daemon/frontier.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "parse/url.h"

namespace freshd::daemon {

Frontier::Frontier(UrlScope scope, uint64_t max_urls_per_host, PageBook* book,
                   sched::Scheduler* sched)
    : scope_(std::move(scope)),
      max_urls_per_host_(static_cast<uint32_t>(
          std::min<uint64_t>(max_urls_per_host, UINT32_MAX))),
      book_(book),
      sched_(sched) {}

std::optional<sched::PageId> Frontier::AddUrl(const std::string& url,
                                              double importance, bool seed,
                                              double now) {
  std::optional<sched::PageId> known = book_->Find(url);
  if (known) {
    if (seed) {
      const sched::Observation obs{
          *known, now,
          sched::DiscoveredObs{importance, sched::DiscoverySource::kSeed}};
      book_->Observe(obs);
    }
    return known;
  }
  if (!seed && !InScope(url)) {
    ++turned_away_.out_of_scope;
    return std::nullopt;
  }
  if (controls_ != nullptr && !controls_->Admit(url)) return std::nullopt;
  auto host = book_->InternHost(parse::UrlAuthority(url));
  if (!host.ok()) {
    ++turned_away_.bad_host;
    return std::nullopt;
  }
  if (book_->hosts().pages(host.value()) >= max_urls_per_host_) {
    ++turned_away_.host_limit;
    ++at_limit_[host.value()];
    return std::nullopt;
  }
  auto id = book_->Add(url, host.value(), importance, max_urls_per_host_);
  if (!id.ok()) {
    ++turned_away_.book_limit;
    return std::nullopt;
  }
  ApplyRule(id.value(), url);
  if (controls_ != nullptr && controls_->has_patterns()) {
    sched_->SetHeld(id.value(), controls_->PatternHeld(url));
  }
  return id.value();
}

Status Frontier::SetRules(const std::vector<RuleConfig>& rules) {
  auto matcher = RuleMatcher::Create(rules);
  if (!matcher.ok()) return matcher.status();
  std::vector<sched::PageRule> table;
  for (const RuleConfig& r : rules) {
    table.push_back({r.min_interval_s, r.max_interval_s, r.importance});
  }
  if (Status s = sched_->SetRules(std::move(table)); !s.ok()) return s;
  rules_ = std::move(matcher).value();
  // Every page is matched again (its rule's index may name another rule
  // now); without rules before or after, nothing is. The URLs are read in
  // one sequential pass of the URL file.
  if (rules_.empty()) {
    for (sched::PageId id = 0; id < book_->size(); ++id) {
      if (sched_->RuleOf(id) != 0) (void)sched_->SetPageRule(id, 0);
    }
  } else {
    book_->ForEachUrl(
        [this](sched::PageId id, std::string_view url) { ApplyRule(id, url); });
  }
  return Status::OK();
}

void Frontier::ApplyRule(sched::PageId page) {
  if (rules_.empty() && sched_->RuleOf(page) == 0) return;
  ApplyRule(page, book_->url(page));
}

void Frontier::ApplyRule(sched::PageId page, std::string_view url) {
  if (rules_.empty() && sched_->RuleOf(page) == 0) return;
  const size_t rule = rules_.Match(url, parse::UrlHost(url));
  // (Cannot fail: the page is known, the rule within the table.)
  (void)sched_->SetPageRule(page, static_cast<uint8_t>(rule));
}

nlohmann::json Frontier::Json(size_t max_hosts) const {
  std::vector<std::pair<uint64_t, sched::HostId>> top;
  top.reserve(at_limit_.size());
  for (const auto& [host, count] : at_limit_) top.emplace_back(count, host);
  const size_t n = std::min(max_hosts, top.size());
  std::partial_sort(top.begin(), top.begin() + static_cast<ptrdiff_t>(n),
                    top.end(), [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first
                                                : a.second < b.second;
                    });
  nlohmann::json hosts = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) {
    const sched::HostId h = top[i].second;
    hosts.push_back({{"host", book_->hosts().Name(h)},
                     {"pages", book_->hosts().pages(h)},
                     {"turned_away", top[i].first}});
  }
  return {{"max_urls_per_host", max_urls_per_host_},
          {"turned_away",
           {{"out_of_scope", turned_away_.out_of_scope},
            {"host_limit", turned_away_.host_limit},
            {"book_limit", turned_away_.book_limit},
            {"bad_host", turned_away_.bad_host}}},
          {"hosts_at_limit", at_limit_.size()},
          {"hosts", std::move(hosts)}};
}

void Frontier::AppendMetrics(PrometheusText& out) const {
  out.Family("freshd_frontier_turned_away_total", "counter",
             "New URLs not added to the frontier, by reason (a block's are "
             "freshd_controls_turned_away_total).");
  const std::pair<const char*, uint64_t> reasons[] = {
      {"out_of_scope", turned_away_.out_of_scope},
      {"host_limit", turned_away_.host_limit},
      {"book_limit", turned_away_.book_limit},
      {"bad_host", turned_away_.bad_host}};
  for (const auto& [reason, count] : reasons) {
    out.Sample("freshd_frontier_turned_away_total", {{"reason", reason}},
               static_cast<double>(count));
  }
  out.Gauge("freshd_frontier_hosts_at_limit",
            "Hosts that turned a new URL away at [crawler] "
            "max_urls_per_host.",
            static_cast<double>(at_limit_.size()));
}

}  // namespace freshd::daemon

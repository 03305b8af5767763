#include "daemon/frontier.h"

#include <algorithm>

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
  if (!seed && !InScope(url)) return std::nullopt;
  if (controls_ != nullptr && !controls_->Admit(url)) return std::nullopt;
  auto host = book_->InternHost(parse::UrlAuthority(url));
  if (!host.ok()) return std::nullopt;
  auto id = book_->Add(url, host.value(), importance, max_urls_per_host_);
  if (!id.ok()) return std::nullopt;
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

}  // namespace freshd::daemon

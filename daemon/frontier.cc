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
    HostTurnedAway& t = turned_away_by_host_[host.value()];
    if (t.host_limit++ == 0) ++hosts_at_limit_;
    return std::nullopt;
  }
  if (!seed && !rate_.Allows(host.value(), now)) {
    ++turned_away_.host_rate;
    HostTurnedAway& t = turned_away_by_host_[host.value()];
    if (t.host_rate++ == 0) ++hosts_over_rate_;
    return std::nullopt;
  }
  auto id = book_->Add(url, host.value(), importance, max_urls_per_host_);
  if (!id.ok()) {
    ++turned_away_.book_limit;
    return std::nullopt;
  }
  if (!seed) rate_.Take(host.value());
  ApplyRule(id.value(), url);
  if (controls_ != nullptr && controls_->has_patterns()) {
    sched_->SetHeld(id.value(), controls_->PatternHeld(url));
  }
  return id.value();
}

std::optional<sched::PageId> Frontier::Collapse(sched::PageId page,
                                                const std::string& canonical,
                                                uint64_t text_hash,
                                                double now) {
  if (book_->removed(page)) return std::nullopt;
  std::optional<sched::PageId> target;
  AliasReason reason = AliasReason::kCanonical;
  if (!canonical.empty()) {
    const std::string url = book_->url(page);
    if (canonical == url) return std::nullopt;  // itself: the normal case
    if (parse::UrlAuthority(canonical) != parse::UrlAuthority(url)) {
      ++ignored_.other_host;
      return std::nullopt;
    }
    if (!InScope(canonical)) {
      ++ignored_.out_of_scope;
      return std::nullopt;
    }
    // Known (a page, or an alias standing for its page: one hop), else
    // added as the page's stand-in.
    target =
        AddUrl(canonical, static_cast<double>(sched_->page(page).importance),
               /*seed=*/false, now);
    if (!target || *target == page || book_->removed(*target)) {
      if (!target || *target != page) ++ignored_.not_a_page;
      return std::nullopt;
    }
  } else {
    target = book_->DuplicateOf(page, text_hash);
    reason = AliasReason::kDuplicate;
    if (!target) return std::nullopt;
  }
  if (!book_->Collapse(page, *target, reason)) {
    ++ignored_.table_full;
    return std::nullopt;
  }
  return target;
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
  top.reserve(turned_away_by_host_.size());
  for (const auto& [host, t] : turned_away_by_host_) {
    top.emplace_back(t.host_limit + t.host_rate, host);
  }
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
                     {"turned_away", top[i].first},
                     {"host_rate", turned_away_by_host_.at(h).host_rate}});
  }
  return {
      {"max_urls_per_host", max_urls_per_host_},
      {"max_new_urls_per_host_per_minute", rate_.per_minute()},
      {"turned_away",
       {{"out_of_scope", turned_away_.out_of_scope},
        {"host_limit", turned_away_.host_limit},
        {"host_rate", turned_away_.host_rate},
        {"book_limit", turned_away_.book_limit},
        {"bad_host", turned_away_.bad_host}}},
      {"hosts_at_limit", hosts_at_limit_},
      {"hosts_over_rate", hosts_over_rate_},
      {"hosts", std::move(hosts)},
      {"removed",
       {{"gone", book_->removed_total(RemovalReason::kGone)},
        {"unreachable", book_->removed_total(RemovalReason::kUnreachable)}}},
      {"collapsed",
       {{"canonical", book_->collapsed_total(AliasReason::kCanonical)},
        {"duplicate", book_->collapsed_total(AliasReason::kDuplicate)}}},
      {"aliases", book_->aliases().size()},
      {"max_aliases", book_->aliases().max()},
      {"collapse_ignored",
       {{"other_host", ignored_.other_host},
        {"out_of_scope", ignored_.out_of_scope},
        {"not_a_page", ignored_.not_a_page},
        {"table_full", ignored_.table_full}}}};
}

void Frontier::AppendMetrics(PrometheusText& out) const {
  out.Family("freshd_frontier_turned_away_total", "counter",
             "New URLs not added to the frontier, by reason (a block's are "
             "freshd_controls_turned_away_total).");
  const std::pair<const char*, uint64_t> reasons[] = {
      {"out_of_scope", turned_away_.out_of_scope},
      {"host_limit", turned_away_.host_limit},
      {"host_rate", turned_away_.host_rate},
      {"book_limit", turned_away_.book_limit},
      {"bad_host", turned_away_.bad_host}};
  for (const auto& [reason, count] : reasons) {
    out.Sample("freshd_frontier_turned_away_total", {{"reason", reason}},
               static_cast<double>(count));
  }
  out.Gauge("freshd_frontier_hosts_at_limit",
            "Hosts that turned a new URL away at [crawler] "
            "max_urls_per_host.",
            static_cast<double>(hosts_at_limit_));
  out.Gauge("freshd_frontier_hosts_over_rate",
            "Hosts that turned a new URL away at [crawler] "
            "max_new_urls_per_host_per_minute.",
            static_cast<double>(hosts_over_rate_));
  out.Family("freshd_pages_removed_total", "counter",
             "Pages removed for good, by reason: gone ([crawler] "
             "gone_after_tries 404/410 answers), unreachable ([crawler] "
             "gone_after_unreachable without an HTTP answer).");
  for (RemovalReason r : {RemovalReason::kGone, RemovalReason::kUnreachable}) {
    out.Sample("freshd_pages_removed_total", {{"reason", RemovalReasonName(r)}},
               static_cast<double>(book_->removed_total(r)));
  }
  out.Family("freshd_pages_collapsed_total", "counter",
             "Duplicate URLs collapsed into another page as aliases, by "
             "reason: canonical (<link rel=canonical>), duplicate (the "
             "same content on one host).");
  for (AliasReason r : {AliasReason::kCanonical, AliasReason::kDuplicate}) {
    out.Sample("freshd_pages_collapsed_total", {{"reason", AliasReasonName(r)}},
               static_cast<double>(book_->collapsed_total(r)));
  }
  out.Gauge("freshd_aliases",
            "Aliases kept (duplicate URLs standing for a page), at most "
            "[crawler] max_aliases.",
            static_cast<double>(book_->aliases().size()));
  out.Family("freshd_collapse_ignored_total", "counter",
             "Duplicates not collapsed, by reason: other_host, out_of_scope "
             "(a canonical naming such a URL), not_a_page (its URL could not "
             "be added or was removed), table_full ([crawler] max_aliases).");
  const std::pair<const char*, uint64_t> ignored[] = {
      {"other_host", ignored_.other_host},
      {"out_of_scope", ignored_.out_of_scope},
      {"not_a_page", ignored_.not_a_page},
      {"table_full", ignored_.table_full}};
  for (const auto& [reason, count] : ignored) {
    out.Sample("freshd_collapse_ignored_total", {{"reason", reason}},
               static_cast<double>(count));
  }
}

}  // namespace freshd::daemon

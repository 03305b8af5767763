// Frontier: which URLs become pages. It owns the scope ([crawler] scope,
// include, exclude; daemon/url_scope.h) and the operators' rules ([[rule]],
// conf/rules.h), and adds URLs — seeds, links, sitemap and feed entries,
// hints, routed work — to the page book: a URL in scope (or a seed) joins
// the book under [crawler] max_urls_per_host and, unless a seed, under
// [crawler] max_new_urls_per_host_per_minute (NewUrlRate: a token bucket
// per host; a URL over it is dropped, not deferred — new_url_rate.h says
// why), and gets the first rule it matches; a seed already known only gets
// its importance raised.
// Nothing is turned away silently: URLs refused for being out of scope, over
// a host's max_urls_per_host, over its rate of new URLs or over the book's
// capacity are counted by reason (Json, AppendMetrics), and the hosts that
// turned URLs away at their cap or rate with how many each (a bounded
// table: one entry per such host).
// Thread: the engine's (scheduler's) thread, the one owning the book.

#ifndef FRESHD_DAEMON_FRONTIER_H_
#define FRESHD_DAEMON_FRONTIER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "conf/rules.h"
#include "daemon/new_url_rate.h"
#include "daemon/operator_controls.h"
#include "daemon/page_book.h"
#include "daemon/prometheus_text.h"
#include "daemon/url_scope.h"
#include "sched/scheduler.h"

namespace freshd::daemon {

class Frontier {
 public:
  // `book` and `sched` (the book's scheduler) must outlive the frontier.
  Frontier(UrlScope scope, uint64_t max_urls_per_host, PageBook* book,
           sched::Scheduler* sched);

  bool InScope(std::string_view normalized_url) const {
    return scope_.Contains(normalized_url);
  }
  // A seed's (or restored page's) host joins the scope.
  void AddScope(std::string_view normalized_url) { scope_.Add(normalized_url); }

  // The id of `url` (normalized), adding it when new and in scope (a seed:
  // in scope or not). A known `seed` gets its importance raised to
  // `importance` if lower (observed at `now`, marked for the next commit).
  // Null: out of scope, over the host's limits (pages, new URLs a minute)
  // or the book's.
  std::optional<sched::PageId> AddUrl(const std::string& url, double importance,
                                      bool seed, double now);

  // Duplicate URLs collapse (PageBook "Duplicates"), after `page`'s fetch
  // at `now` found content: its <link rel=canonical> `canonical`
  // (normalized; empty: none) naming another URL of the same host in
  // scope makes `page` an alias of that URL's page (added when new; an
  // alias URL stands for its page: a chain is followed once, no further);
  // else a page of its host with the same `text_hash` makes it an alias of
  // that page. A canonical on another host, out of scope, or whose page was
  // removed is ignored and counted (CollapseIgnored); a canonical naming
  // the page itself is the normal case. Returns the page collapsed into.
  std::optional<sched::PageId> Collapse(sched::PageId page,
                                        const std::string& canonical,
                                        uint64_t text_hash, double now);

  // Replaces the rules; every known page is matched again (one pass over the
  // book's URLs). InvalidArgument for rules the config loader would refuse:
  // the rules in force are then kept.
  [[nodiscard]] Status SetRules(const std::vector<RuleConfig>& rules);
  // Gives the page the first rule its URL matches (none: 0).
  void ApplyRule(sched::PageId page);  // reads the page's URL
  void ApplyRule(sched::PageId page, std::string_view url);
  const RuleMatcher& rules() const { return rules_; }
  // The operators' controls (null: none; must outlive the frontier): a new
  // URL a block matches is not added (OperatorControls::Admit counts it);
  // a new page a URL pattern holds is held in the scheduler.
  void set_controls(OperatorControls* controls) { controls_ = controls; }
  // [crawler] max_new_urls_per_host_per_minute (0, the default here: no
  // bound). Seeds are not bound by it.
  void set_max_new_urls_per_minute(uint64_t per_minute) {
    rate_ = NewUrlRate(per_minute);
  }

  // New URLs AddUrl did not add, by reason (a block's are the controls').
  struct TurnedAway {
    uint64_t out_of_scope = 0;  // not a seed, and outside [crawler] scope
    uint64_t host_limit = 0;    // its host has max_urls_per_host pages
    uint64_t host_rate = 0;     // its host added its new URLs this minute
    uint64_t book_limit = 0;    // the scheduler holds no more pages
    uint64_t bad_host = 0;      // its host could not be interned
  };
  const TurnedAway& turned_away() const { return turned_away_; }
  // Canonicals Collapse ignored, by reason.
  struct CollapseIgnored {
    uint64_t other_host = 0;    // names a URL of another host
    uint64_t out_of_scope = 0;  // names a URL outside [crawler] scope
    uint64_t not_a_page = 0;    // its URL could not be added, or was removed
    uint64_t table_full = 0;    // [crawler] max_aliases reached
  };
  const CollapseIgnored& collapse_ignored() const { return ignored_; }
  // Hosts that turned a URL away at max_urls_per_host.
  size_t hosts_at_limit() const { return hosts_at_limit_; }
  // Hosts that turned a URL away at max_new_urls_per_host_per_minute.
  size_t hosts_over_rate() const { return hosts_over_rate_; }
  // /status "frontier": the counts, the cap and the rate, the `max_hosts`
  // hosts that turned most URLs away (name, pages, turned_away in all and
  // host_rate of them), the pages removed
  // for good by reason (PageBook "Removal"), and the duplicates collapsed
  // (aliases, by reason; canonicals ignored, by reason).
  nlohmann::json Json(size_t max_hosts) const;
  // freshd_frontier_turned_away_total{reason},
  // freshd_frontier_hosts_at_limit, freshd_frontier_hosts_over_rate,
  // freshd_pages_removed_total{reason},
  // freshd_pages_collapsed_total{reason}, freshd_aliases and
  // freshd_collapse_ignored_total{reason}.
  void AppendMetrics(PrometheusText& out) const;

 private:
  UrlScope scope_;
  const uint32_t max_urls_per_host_;
  PageBook* const book_;
  sched::Scheduler* const sched_;
  RuleMatcher rules_;
  OperatorControls* controls_ = nullptr;
  NewUrlRate rate_;
  TurnedAway turned_away_;
  CollapseIgnored ignored_;
  // Hosts that turned URLs away, and how many, at the cap or the rate.
  struct HostTurnedAway {
    uint64_t host_limit = 0;
    uint64_t host_rate = 0;
  };
  std::unordered_map<sched::HostId, HostTurnedAway> turned_away_by_host_;
  size_t hosts_at_limit_ = 0;   // of them, with host_limit > 0
  size_t hosts_over_rate_ = 0;  // with host_rate > 0
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_FRONTIER_H_

// The synthetic web the simulator (and later `freshd testweb`) runs: hosts,
// pages per host, page classes with shares, and per page its importance,
// regions (static words; a churn region replaced at Poisson times; a scroll
// region of K items shifted at Poisson times), and change-indicating signals
// (recall, false-positive rate, delay). Read from TOML (format in
// sim/README.md); every page is drawn deterministically from (seed, page).
// Rates in the TOML and here are per day; TrueParams/TrueModel convert to
// the scheduler's per-second unit. Value types; thread-safe to share const.

#ifndef FRESHD_SIM_WEB_MODEL_H_
#define FRESHD_SIM_WEB_MODEL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sched/crawl_value.h"
#include "sched/divergence_model.h"
#include "sim/random.h"

namespace freshd::sim {

inline constexpr double kDay = 86400;
inline constexpr uint64_t kMaxSimPages = 10'000'000;
// Bounds on the other values of a web file (an outsider may write one, and
// the test web server renders its pages): every distribution's support must
// lie inside them, and every draw is clamped to them.
inline constexpr double kMaxSimRatePerDay = 1e4;  // churn, scroll, false
inline constexpr double kMaxSimImportance = 1e6;  // μ
inline constexpr double kMaxSimDelayDays = 365;   // signal delay
inline constexpr double kMaxSimCrawlDelayS = 86400;
inline constexpr int kMaxSimPageWords = 1'000'000;  // static + churn + scroll

struct PageClass {
  std::string name = "default";
  double share = 1;
  Distribution importance = Distribution::Const(1);
  int static_words = 0;
  int churn_words = 0;
  Distribution churn_rate;      // per day
  int scroll_items = 0;         // K
  int item_words = 0;           // words per scroll item
  Distribution scroll_rate;     // per day
  Distribution recall;          // α
  Distribution false_rate;      // ν, per day
  Distribution delay_days;      // signal delay after the change
  bool signal_lastmod = false;  // signals claim their change time (lastmod)
  bool last_modified = false;   // served: Last-Modified = the latest change
};

struct WebSpec {
  std::string name;
  uint32_t hosts = 1;
  uint32_t pages_per_host = 1;
  Distribution crawl_delay_s;  // per host
  // false: each page draws its class; true: each host does, and all its
  // pages share it (hosts that differ, as a news site and a manual do).
  bool classes_by_host = false;
  std::vector<PageClass> classes;
};

// Parses the TOML text of a web; `name` stands in for the file in messages.
// InvalidArgument with "file:line: key: what" style messages on bad input
// (unknown keys, shares not summing to 1, counts out of bounds).
Result<WebSpec> ParseWebSpec(std::string_view toml, std::string_view name);
Result<WebSpec> LoadWebSpec(const std::string& path);

// The web as a crawler that polls its sitemaps every `poll_days` sees it:
// every class's signals claim their change time (sitemap lastmod) and, where
// they had no delay, arrive U(0, poll_days) late (a delay already there is
// kept: the polling adds to it, not modelled). Pages, changes and which
// changes signal are those of `spec` for the same seed.
WebSpec PolledSignalsSpec(WebSpec spec, double poll_days);

// One page's true behaviour.
struct SimPage {
  uint32_t host = 0;
  uint16_t cls = 0;
  double importance = 1;
  int static_words = 0, churn_words = 0, scroll_items = 0, item_words = 0;
  double churn_rate = 0, scroll_rate = 0;  // per day (0 if region empty)
  double recall = 0, false_rate = 0;       // α, ν per day
  bool signal_lastmod = false;             // signals carry changed_at
  bool last_modified = false;              // exact Last-Modified served
};

struct WebModel {
  WebSpec spec;
  uint64_t seed = 0;
  std::vector<SimPage> pages;
  std::vector<double> host_delay_s;

  // Draws every page from (seed, page id).
  static WebModel Build(const WebSpec& spec, uint64_t seed);

  // Holistic change rate Δ (per day): any region event changes the page.
  double ChangeRate(uint32_t page) const;
  // Truth for the scheduler's oracle mode, rates per second.
  sched::PageParams TrueParams(uint32_t page) const;
  sched::DivergenceModel TrueModel(uint32_t page) const;
};

}  // namespace freshd::sim

#endif  // FRESHD_SIM_WEB_MODEL_H_

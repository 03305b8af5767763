#include "cli/truth_meter.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace freshd::cli {

TruthMeter::TruthMeter(const sim::TestWeb& web) : web_(web) {
  const sim::WebModel& model = web.model();
  const auto n = static_cast<uint32_t>(model.pages.size());
  churn_.reserve(n);
  scroll_.reserve(n);
  for (uint32_t p = 0; p < n; ++p) {
    churn_.emplace_back(model, p, sim::kChurn);
    scroll_.emplace_back(model, p, sim::kScroll);
    total_importance_ += model.pages[p].importance;
  }
  last_change_.assign(n, -1);
  copy_.assign(n, sim::Version{});
  copy_fetched_.assign(n, -1);
  fetched_at_.assign(n, -1);
  newest_id_.assign(n, 0);
}

int64_t TruthMeter::PageOf(const daemon::CrawlLoop& loop, size_t id) {
  while (page_of_id_.size() <= id) {
    const std::string owned = loop.urls()[page_of_id_.size()];
    const std::string_view url = owned;
    int64_t page = -1;
    size_t scheme = url.find("://");
    size_t path = scheme == std::string_view::npos ? std::string_view::npos
                                                   : url.find('/', scheme + 3);
    if (path != std::string_view::npos && url.substr(path).starts_with("/p/")) {
      auto host = web_.HostId(url.substr(scheme + 3, path - scheme - 3));
      std::string_view digits = url.substr(path + 3);
      uint64_t n = 0;
      auto [end, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), n);
      const auto& pages = web_.model().pages;
      if (host && ec == std::errc() && end == digits.data() + digits.size() &&
          n < pages.size() && pages[n].host == *host) {
        page = static_cast<int64_t>(n);
      }
    }
    page_of_id_.push_back(page);
  }
  return page_of_id_[id];
}

Truth TruthMeter::Measure(const daemon::CrawlLoop& loop, double unix_now) {
  std::fill(fetched_at_.begin(), fetched_at_.end(), -1.0);
  const sched::Scheduler& scheduler = loop.scheduler();
  for (size_t id = 0; id < loop.urls().size(); ++id) {
    int64_t page = PageOf(loop, id);
    const sched::PageState& s = scheduler.page(static_cast<sched::PageId>(id));
    if (page < 0 || !s.fetched()) continue;
    const auto p = static_cast<size_t>(page);
    const double at = web_.VirtualTime(s.last_fetch);
    if (at > fetched_at_[p]) {
      fetched_at_[p] = at;
      newest_id_[p] = id;
    }
  }
  const sim::WebModel& model = web_.model();
  const double now = web_.VirtualTime(unix_now);
  Truth sum;
  for (uint32_t p = 0; p < model.pages.size(); ++p) {
    for (sim::EventStream* s : {&churn_[p], &scroll_[p]}) {
      while (s->next() <= now) {
        last_change_[p] = std::max(last_change_[p], s->next());
        s->Advance();
      }
    }
    const double weight = model.pages[p].importance;
    if (fetched_at_[p] < 0) {
      sum.staleness += weight;
      continue;
    }
    if (last_change_[p] <= fetched_at_[p]) sum.freshness += weight;
    sum.estimated_freshness +=
        weight * scheduler.FreshProbability(
                     static_cast<sched::PageId>(newest_id_[p]), unix_now);
    if (copy_fetched_[p] != fetched_at_[p]) {
      copy_[p] = sim::VersionAt(model, p, fetched_at_[p]);
      copy_fetched_[p] = fetched_at_[p];
    }
    const sim::Version live{churn_[p].count(), scroll_[p].count()};
    sum.staleness +=
        weight * sim::VersionDivergence(model.pages[p], copy_[p], live);
  }
  if (total_importance_ <= 0) return Truth{};
  return Truth{sum.freshness / total_importance_,
               sum.staleness / total_importance_,
               sum.estimated_freshness / total_importance_};
}

Truth TruthMeter::Sample(const daemon::CrawlLoop& loop, double unix_now) {
  Truth t = Measure(loop, unix_now);
  if (last_sample_ >= 0 && unix_now > last_sample_) {
    const double dt = unix_now - last_sample_;
    integral_.freshness += t.freshness * dt;
    integral_.staleness += t.staleness * dt;
    integral_.estimated_freshness += t.estimated_freshness * dt;
    span_ += dt;
  }
  last_sample_ = std::max(last_sample_, unix_now);
  return t;
}

void TruthMeter::ResetAverage() {
  integral_ = Truth{};
  span_ = 0;
  last_sample_ = -1;
}

Truth TruthMeter::Average() const {
  if (!(span_ > 0)) return Truth{-1, -1, -1};
  return Truth{integral_.freshness / span_, integral_.staleness / span_,
               integral_.estimated_freshness / span_};
}

}  // namespace freshd::cli

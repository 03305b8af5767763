// CrawlLoop's status views: GET /status, /metrics and /page (docs/DESIGN.md
// "contract — status endpoint"). The freshness estimate and the queue counts
// take a pass over the pages, bounded to ~1% of the scheduler's thread
// however fast they are polled (CopySummary); beyond kStatusSlicedPages the
// pass is spread over housekeeping turns, ≤ 2.5 ms of CPU each, and the
// figures are the last complete pass's (AdvanceStatusPasses).

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "base/clock.h"
#include "daemon/crawl_loop.h"
#include "parse/url.h"

namespace freshd::daemon {
namespace {

constexpr double kDay = 86400;

// CPU time of the calling thread: a pass's cost, whatever else the machine
// runs (wall time would count preemption, and cache a one-page summary).
double ThreadCpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

const sched::Scheduler::Summary& CrawlLoop::CopySummary(double now) const {
  if (sched_->size() > kStatusSlicedPages) return sliced_summary_;
  if (const auto* cached = summary_cache_.Get(SteadyNow())) return *cached;
  const double cpu0 = ThreadCpuNow();
  sched::Scheduler::Summary summary = sched_->Summarize(now);
  const double cost = ThreadCpuNow() - cpu0;
  return summary_cache_.Put(summary, SteadyNow(), cost);
}

void CrawlLoop::AdvanceStatusPasses(double now) {
  constexpr size_t kSlicePages = 4096;  // pages between clock reads
  const size_t pages = sched_->size();
  if (pages <= kStatusSlicedPages) return;
  const double cpu0 = ThreadCpuNow();
  auto spent = [&] { return ThreadCpuNow() - cpu0 >= kStatusSliceCpuS; };
  // Runs `step` (one slice; true once its pass is complete) until the pass
  // completes or this turn's CPU is spent; true if the pass completed.
  auto advance = [&](auto&& step) {
    bool done;
    do {
      done = step();
    } while (!done && !spent());
    return done;
  };
  bool done = advance(
      [&] { return sched_->SummarizeSome(now, kSlicePages, &summary_pass_); });
  if (done || !summary_pass_done_) {
    sliced_summary_ = summary_pass_.summary();
    sliced_summary_pages_ = done ? pages : summary_pass_.next();
  }
  if (done) {
    summary_pass_done_ = true;
    summary_pass_ = {};
  }
  if (SteadyNow() >= due_wanted_until_ || spent()) return;
  done = advance([&] {
    const auto end = static_cast<sched::PageId>(
        std::min<size_t>(pages, size_t{due_pass_next_} + kSlicePages));
    AddDueValues(due_pass_next_, end, now, &due_pass_top_);
    due_pass_next_ = end;
    return end >= pages;
  });
  if (done || !due_pass_done_) {
    sliced_due_ = due_pass_top_;
    std::sort(sliced_due_.begin(), sliced_due_.end(), std::greater<>());
    if (sliced_due_.size() > kDueNext) sliced_due_.resize(kDueNext);
  }
  if (done) {
    due_pass_done_ = true;
    due_pass_top_.clear();
    due_pass_next_ = 0;
  }
}

nlohmann::json CrawlLoop::SummaryPassJson() const {
  // Below kStatusSlicedPages every figure is a whole pass's (cached); above,
  // the last complete sliced pass's, or the first pass's so far.
  if (sched_->size() <= kStatusSlicedPages) {
    return {{"sliced", false},
            {"complete", true},
            {"pages_covered", sched_->size()}};
  }
  return {{"sliced", true},
          {"complete", summary_pass_done_},
          {"pages_covered", sliced_summary_pages_}};
}

void CrawlLoop::AddDueValues(
    sched::PageId begin, sched::PageId end, double now,
    std::vector<std::pair<double, sched::PageId>>* top) const {
  for (sched::PageId p = begin; p < end; ++p) {
    if (sched_->page(p).in_flight()) continue;
    top->emplace_back(sched_->Value(p, now), p);
    if (top->size() >= 4 * kDueNext) {
      std::nth_element(top->begin(), top->begin() + kDueNext, top->end(),
                       std::greater<>());
      top->resize(kDueNext);
    }
  }
}

nlohmann::json CrawlLoop::StatusJson() const {
  double now = UnixNow();
  const size_t recent = observer_->FetchesInLastMinute(now);
  const sched::Scheduler::Summary& summary = CopySummary(now);
  const LoopLagProbe::Stats net_lag = net_->lag();
  const LoopLagProbe::Stats sched_lag = lag_probe_.stats();
  const StoreWriter::Stats writer = writer_->stats();
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [name, count] : observer_->outcomes()) {
    if (name != "ok" && name != "not-modified" && count > 0) {
      errors[name] = count;
    }
  }
  // The stage that held the rate back most over the last ~10 s.
  nlohmann::json limits = nlohmann::json::object();
  double total = 0;
  for (int i = 1; i < kLimits; ++i) total += dispatcher_->limits().seconds()[i];
  for (int i = 1; i < kLimits; ++i) {
    const Limit l = static_cast<Limit>(i);
    limits[LimitName(l)] =
        total > 0 ? dispatcher_->limits().seconds()[i] / total : 0.0;
  }
  const double rate_actual =
      recent / std::clamp(now - started_unix_, 1.0, 60.0);
  const Limit limited_by = LimitedBy(dispatcher_->limits().seconds(),
                                     rate_actual, config_.budget.rate);
  return {
      {"state", stopping_ ? "stopping" : "running"},
      {"version", FRESHD_VERSION},
      {"uptime_s", now - started_unix_},
      {"pages_known", book_->size()},
      {"pages_fetched_total", observer_->fetched_total()},
      {"rate_target", config_.budget.rate},
      {"rate_actual", rate_actual},
      {"hosts", book_->hosts().size()},
      {"estimated_freshness", summary.estimated_freshness},
      {"summary_pass", SummaryPassJson()},
      {"queue",
       {{"due", summary.overdue},
        {"new", summary.unfetched},
        {"failed", summary.failed}}},
      {"errors", errors},
      {"robots_denied_total", observer_->robots_denied_total()},
      {"signals_total", intake_->signals_total()},
      {"signals_stale_total", intake_->signals_stale_total()},
      {"sitemaps_fetched_total", intake_->sitemaps_fetched()},
      {"site_feeds", intake_->SiteFeedsJson()},
      {"store_errors_total", committer_->store_errors() + writer.errors},
      {"policy", config_.sched.policy},
      {"value_threshold", sched_->threshold()},
      {"host_rate_spread", sched_->hosts().HostRateSpread()},
      {"host_rate_weight", sched_->hosts().HostRateWeight()},
      // The network thread's lag (the fetcher's event loop), and the
      // scheduler thread's.
      {"loop_lag_ms",
       {{"max", 1e3 * net_lag.max_s}, {"p99", 1e3 * net_lag.p99_s}}},
      {"scheduler_lag_ms",
       {{"max", 1e3 * sched_lag.max_s}, {"p99", 1e3 * sched_lag.p99_s}}},
      {"in_flight",
       {{"network", dispatcher_->on_network()},
        {"parse", dispatcher_->in_flight() - dispatcher_->on_network()},
        {"total", dispatcher_->in_flight()}}},
      {"stages",
       {{"parse_queue", parse_->jobs()},
        {"parse_queue_bytes", parse_->bytes()},
        {"write_queue", writer.queued + (committer_->running() ? 1 : 0)},
        {"write_queue_bytes",
         writer.queued_bytes + committer_->pending_bytes()},
        {"write_pending_pages", book_->marked_pages()},
        {"commits_total", writer.commits},
        {"records_written_total", writer.records},
        {"warc_records_total", writer.warc_records},
        {"warc_deduplicated_total", writer.warc_deduped}}},
      {"limited_by", LimitName(limited_by)},
      {"limits", limits},
      {"recovered",
       {{"pages", recovery_.pages},
        {"pages_reset", recovery_.pages_reset},
        {"corrupt", recovery_.corrupt}}},
      {"cluster", ClusterJson()},
      {"rules", RulesStatusJson()},
  };
}

nlohmann::json CrawlLoop::RulesStatusJson() const {
  nlohmann::json out = nlohmann::json::array();
  if (frontier_->rules().empty()) return out;
  // One byte a page read: ~10 ms at 10M pages, beside the summary's pass.
  const std::vector<uint64_t> pages = sched_->PagesPerRule();
  for (size_t i = 0; i < frontier_->rules().rules().size(); ++i) {
    out.push_back({{"name", frontier_->rules().rules()[i].name},
                   {"pages", i + 1 < pages.size() ? pages[i + 1] : 0}});
  }
  return out;
}

void CrawlLoop::PublishSnapshot() const {
  nlohmann::json status = StatusJson();
  status["snapshot_unix"] = UnixNow();
  auto snapshot = std::make_shared<const nlohmann::json>(std::move(status));
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  snapshot_ = std::move(snapshot);
}

std::shared_ptr<const nlohmann::json> CrawlLoop::status_snapshot() const {
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  return snapshot_;
}

std::string CrawlLoop::MetricsText() const {
  nlohmann::json s = StatusJson();
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help,
                    double value) {
    char line[256];
    std::snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n",
                  name, help, name, type, name, value);
    out += line;
  };
  metric("freshd_uptime_seconds", "gauge", "Seconds since start.",
         s["uptime_s"].get<double>());
  metric("freshd_pages_known", "gauge", "URLs the scheduler knows.",
         s["pages_known"].get<double>());
  metric("freshd_pages_fetched_total", "counter",
         "Fetches that got content or a 304.",
         s["pages_fetched_total"].get<double>());
  metric("freshd_rate_target", "gauge", "Crawl budget, pages per second.",
         s["rate_target"].get<double>());
  metric("freshd_rate_actual", "gauge", "Fetches per second, last minute.",
         s["rate_actual"].get<double>());
  metric("freshd_hosts", "gauge", "Hosts known.", s["hosts"].get<double>());
  metric("freshd_estimated_freshness", "gauge",
         "Importance-weighted expected freshness under estimated rates.",
         s["estimated_freshness"].get<double>());
  metric("freshd_host_rate_weight", "gauge",
         "Pseudo-changes a host's change rate borrows from the global one.",
         s["host_rate_weight"].get<double>());
  metric("freshd_queue_due", "gauge", "Pages past their max_interval floor.",
         s["queue"]["due"].get<double>());
  metric("freshd_queue_new", "gauge", "Pages never attempted.",
         s["queue"]["new"].get<double>());
  metric("freshd_queue_failed", "gauge", "Pages whose latest fetch failed.",
         s["queue"]["failed"].get<double>());
  metric("freshd_robots_denied_total", "counter", "URLs refused by robots.txt.",
         s["robots_denied_total"].get<double>());
  metric("freshd_signals_total", "counter",
         "Change signals (sitemap lastmod, POST /signal).",
         s["signals_total"].get<double>());
  metric("freshd_signals_stale_total", "counter",
         "Stale change signals dropped (sitemap lastmod, POST /signal).",
         s["signals_stale_total"].get<double>());
  metric("freshd_loop_lag_max_seconds", "gauge",
         "Longest the crawl loop's thread was held, last minute.",
         s["loop_lag_ms"]["max"].get<double>() / 1e3);
  metric("freshd_loop_lag_p99_seconds", "gauge",
         "99th percentile of the crawl loop's lag, last minute.",
         s["loop_lag_ms"]["p99"].get<double>() / 1e3);
  metric("freshd_scheduler_lag_max_seconds", "gauge",
         "Longest the scheduler's thread was held, last minute.",
         s["scheduler_lag_ms"]["max"].get<double>() / 1e3);
  metric("freshd_in_flight_fetches", "gauge",
         "Fetches on the network or being parsed.",
         s["in_flight"]["total"].get<double>());
  metric("freshd_parse_queue", "gauge", "Bodies waiting for the parse pool.",
         s["stages"]["parse_queue"].get<double>());
  metric("freshd_write_queue_bytes", "gauge",
         "Bytes waiting for the writer (WARC payloads).",
         s["stages"]["write_queue_bytes"].get<double>());
  metric("freshd_store_commits_total", "counter",
         "Group commits written to the store.",
         s["stages"]["commits_total"].get<double>());
  metric("freshd_store_errors_total", "counter",
         "Failed store commits and WARC writes.",
         s["store_errors_total"].get<double>());
  out +=
      "# HELP freshd_fetch_outcomes_total Fetch outcomes by class.\n"
      "# TYPE freshd_fetch_outcomes_total counter\n";
  for (const auto& [name, count] : observer_->outcomes()) {
    out += "freshd_fetch_outcomes_total{class=\"" + name + "\"} " +
           std::to_string(count) + "\n";
  }
  AppendClusterMetrics(s, &out);
  AppendChangesMetrics(s, &out);
  PrometheusText more;
  AppendOperatorMetrics(more);
  return out + more.Take();
}

Result<nlohmann::json> CrawlLoop::PageJson(std::string_view raw_url) const {
  auto url = parse::NormalizeUrl(raw_url);
  if (!url.ok()) return url.status();
  // Checked against the stored URL: never another URL's page.
  std::optional<sched::PageId> known = book_->FindExact(url.value());
  if (!known) return Status::NotFound("unknown URL");
  sched::PageId id = *known;
  double now = UnixNow();
  const sched::PageState& s = sched_->page(id);
  sched::PageParams p = sched_->Params(id);
  double value = sched_->Value(id, now);
  // Next expected fetch: when the value reaches the recent selections'
  // threshold (values grow with time since the fetch, signals aside),
  // found by doubling then bisection; capped by the floor's deadline.
  nlohmann::json next = nullptr;
  if (s.fetched()) {
    double threshold = sched_->threshold();
    double deadline = s.last_fetch + config_.sched.max_interval_s;
    const uint8_t rule = sched_->RuleOf(id);
    if (rule > 0 && sched_->rules()[rule - 1].max_interval > 0) {
      deadline = std::min(
          deadline, s.last_fetch + sched_->rules()[rule - 1].max_interval);
    }
    deadline = std::max(deadline, s.last_fetch + sched_->MinIntervalOf(id));
    double t = deadline;
    if (threshold > 0 && value < threshold) {
      double lo = now, hi = now + 60;
      while (hi < deadline && sched_->Value(id, hi) < threshold) {
        lo = hi;
        hi = now + 2 * (hi - now);
      }
      hi = std::min(hi, deadline);
      for (int i = 0; i < 40; ++i) {
        double mid = 0.5 * (lo + hi);
        (sched_->Value(id, mid) < threshold ? lo : hi) = mid;
      }
      t = hi;
    } else if (threshold > 0) {
      t = now;
    }
    next = std::max(
        {now, std::min(t, deadline), s.last_fetch + sched_->MinIntervalOf(id)});
  }
  return nlohmann::json{
      {"url", url.value()},
      {"host", book_->hosts().Name(s.host)},
      {"last_fetch_unix", s.fetched() ? nlohmann::json(s.last_fetch) : nullptr},
      {"fetches", s.fetches},
      {"consecutive_failures", s.failures},
      {"importance", s.importance},
      {"change_rate_per_day", p.delta * kDay},
      {"signal_recall", p.alpha},
      {"false_signal_rate_per_day", p.nu * kDay},
      {"signal_precision",
       p.alpha * p.delta + p.nu > 0
           ? nlohmann::json(p.alpha * p.delta / (p.alpha * p.delta + p.nu))
           : nullptr},
      {"signals_since_fetch", s.signals},
      {"fresh_probability", sched_->FreshProbability(id, now)},
      {"value", value},
      {"in_flight", s.in_flight()},
      {"next_expected_fetch_unix", next},
      {"rule", RuleJson(id)},
  };
}

nlohmann::json CrawlLoop::RuleJson(sched::PageId page) const {
  const uint8_t rule = sched_->RuleOf(page);
  if (rule == 0 || rule > frontier_->rules().rules().size()) return nullptr;
  const RuleConfig& r = frontier_->rules().rules()[rule - 1];
  const auto or_null = [](double v) {
    return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr);
  };
  return {{"name", r.name},
          {"min_interval_s", or_null(r.min_interval_s)},
          {"max_interval_s", or_null(r.max_interval_s)},
          {"importance", or_null(r.importance)}};
}

}  // namespace freshd::daemon

#include "daemon/status_views.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "base/clock.h"
#include "daemon/operator_log.h"
#include "daemon/sd_notify.h"
#include "parse/url.h"
#include "spdlog/spdlog.h"

namespace freshd::daemon {
namespace {

constexpr double kDay = 86400;

// Directory entries a disk-use scan looks at, at most (a WARC directory
// kept for years must not hold the scheduler's thread).
constexpr size_t kMaxScanEntries = 100000;

// Bytes and regular files under `dir` (recursive, bounded); zeros when it
// does not exist.
void ScanDir(const std::string& dir, double* bytes, double* files) {
  *bytes = 0;
  *files = 0;
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(dir, ec), end;
  for (size_t seen = 0; !ec && it != end && seen < kMaxScanEntries;
       it.increment(ec), ++seen) {
    if (!it->is_regular_file(ec)) continue;
    const auto size = it->file_size(ec);
    if (ec) {
      ec.clear();
      continue;
    }
    *bytes += static_cast<double>(size);
    *files += 1;
  }
}

double ErrorsOf(const nlohmann::json& status) {
  double errors = 0;
  for (const auto& [name, count] : status["errors"].items()) {
    if (name != "redirect" && count.is_number()) errors += count.get<double>();
  }
  return errors;
}

HistoryPoint PointOf(const nlohmann::json& status, double now) {
  return HistoryPoint{
      now, status.value("rate_target", 0.0), status.value("rate_actual", 0.0),
      status.value("estimated_freshness", 0.0), ErrorsOf(status)};
}

}  // namespace

StatusViews::StatusViews(Options options, const sched::Scheduler* sched,
                         const PageBook* book, const RuleMatcher* rules,
                         const RecoveryReport* recovery, Sources sources)
    : options_(std::move(options)),
      sched_(sched),
      book_(book),
      rules_(rules),
      recovery_(recovery),
      sources_(std::move(sources)) {}

StatusViews::FetchCounts StatusViews::Fetches(double now) const {
  return sources_.fetches ? sources_.fetches(now) : FetchCounts{};
}

StatusViews::StageFigures StatusViews::Stages() const {
  return sources_.stages ? sources_.stages() : StageFigures{};
}

StatusViews::HostGate StatusViews::Gate(sched::HostId host) const {
  return sources_.host_gate ? sources_.host_gate(host) : HostGate{};
}

double StatusViews::RateTarget() const {
  return sources_.rate_target ? sources_.rate_target() : 0;
}

void StatusViews::Tick(double now) {
  AdvancePasses(now);
  PublishSnapshot();
  OperatorTick(now);
}

const sched::Scheduler::Summary& StatusViews::CopySummary(double now) const {
  if (sched_->size() > kStatusSlicedPages) return sliced_summary_;
  if (const auto* cached = summary_cache_.Get(SteadyNow())) return *cached;
  const double cpu0 = ThreadCpuNow();
  sched::Scheduler::Summary summary = sched_->Summarize(now);
  const double cost = ThreadCpuNow() - cpu0;
  return summary_cache_.Put(summary, SteadyNow(), cost);
}

void StatusViews::AdvancePasses(double now) {
  constexpr size_t kSlicePages = 4096;  // pages between clock reads
  const size_t pages = sched_->size();
  if (pages <= kStatusSlicedPages) return;
  // While the overview wants the due pass, the two passes share the turn's
  // CPU, each at least one slice: a summary that spends a whole turn must
  // not starve the due pass (it restarts as soon as it completes).
  const bool due_wanted = SteadyNow() < due_wanted_until_;
  const double budget =
      due_wanted ? options_.slice_cpu_s / 2 : options_.slice_cpu_s;
  // Runs `step` (one slice; true once its pass is complete) until the pass
  // completes or its share of this turn's CPU is spent; true if the pass
  // completed.
  auto advance = [&](auto&& step) {
    const double cpu0 = ThreadCpuNow();
    bool done;
    do {
      done = step();
    } while (!done && ThreadCpuNow() - cpu0 < budget);
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
  if (!due_wanted) return;
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

nlohmann::json StatusViews::SummaryPassJson() const {
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

void StatusViews::AddDueValues(
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

nlohmann::json StatusViews::StatusJson() const {
  double now = UnixNow();
  const FetchCounts fetches = Fetches(now);
  const size_t recent = fetches.last_minute;
  const sched::Scheduler::Summary& summary = CopySummary(now);
  const StageFigures stages = Stages();
  const LoopLagProbe::Stats& net_lag = stages.network_lag;
  const LoopLagProbe::Stats& sched_lag = stages.scheduler_lag;
  const StoreWriter::Stats& writer = stages.writer;
  const SignalCounts signals =
      sources_.signals ? sources_.signals() : SignalCounts{};
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [name, count] : fetches.outcomes) {
    if (name != "ok" && name != "not-modified" && count > 0) {
      errors[name] = count;
    }
  }
  // The stage that held the rate back most over the last ~10 s.
  nlohmann::json limits = nlohmann::json::object();
  double total = 0;
  for (int i = 1; i < kLimits; ++i) total += stages.limit_seconds[i];
  for (int i = 1; i < kLimits; ++i) {
    const Limit l = static_cast<Limit>(i);
    limits[LimitName(l)] = total > 0 ? stages.limit_seconds[i] / total : 0.0;
  }
  const double rate_actual =
      recent / std::clamp(now - options_.started_unix, 1.0, 60.0);
  const Limit limited_by =
      LimitedBy(stages.limit_seconds, rate_actual, RateTarget());
  return {
      {"state",
       sources_.stopping && sources_.stopping() ? "stopping" : "running"},
      {"version", FRESHD_VERSION},
      {"uptime_s", now - options_.started_unix},
      {"pages_known", book_->size()},
      {"pages_fetched_total", fetches.fetched_total},
      {"rate_target", RateTarget()},
      {"rate_actual", rate_actual},
      {"hosts", book_->hosts().size()},
      {"estimated_freshness", summary.estimated_freshness},
      {"summary_pass", SummaryPassJson()},
      {"queue",
       {{"due", summary.overdue},
        {"new", summary.unfetched},
        {"failed", summary.failed}}},
      {"errors", errors},
      {"robots_denied_total", fetches.robots_denied_total},
      {"signals_total", signals.signals_total},
      {"signals_stale_total", signals.signals_stale_total},
      {"sitemaps_fetched_total", signals.sitemaps_fetched},
      {"site_feeds",
       sources_.site_feeds ? sources_.site_feeds() : nlohmann::json()},
      // Each signal source's figures and the dated signals dropped as
      // impossible (SignalIntake::SignalSourcesJson).
      {"signal_sources",
       sources_.signal_sources ? sources_.signal_sources() : nlohmann::json()},
      // IndexNow pings (null without [push] listen).
      {"indexnow", sources_.indexnow ? sources_.indexnow() : nlohmann::json()},
      // WebSub subscriptions (null without [push] listen).
      {"websub", sources_.websub ? sources_.websub() : nlohmann::json()},
      // Operator controls (POST /control), the list bounded.
      {"controls", sources_.controls ? sources_.controls() : nlohmann::json()},
      // New URLs not added, by reason; the hosts at max_urls_per_host.
      {"frontier", sources_.frontier ? sources_.frontier() : nlohmann::json()},
      {"store_errors_total", stages.commit_errors + writer.errors},
      {"validator_read_failures_total", stages.validator_read_failures},
      {"policy", options_.policy},
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
       {{"network", stages.on_network},
        {"parse", stages.in_flight - stages.on_network},
        {"total", stages.in_flight},
        // A full-weight host's most while hosts contend for the
        // connections (weighted max-min fair), the hosts counted, whether
        // they contended, and how many found a page in under half their
        // recent fetches (their share cut as much).
        {"per_host_cap", stages.fair_share_cap},
        {"hosts_active", stages.fair_share_hosts},
        {"contended", stages.fair_share_contended},
        {"hosts_low_yield", stages.fair_share_low_yield},
        // And by the parse pool's time: hosts over their fair share of
        // it in the last window (their weight cut as much), the largest
        // share.
        {"hosts_over_parse_share", stages.parse_hosts_over_share},
        {"parse_share_max", stages.parse_share_max}}},
      {"stages",
       {{"parse_queue", stages.parse_jobs},
        {"parse_queue_bytes", stages.parse_bytes},
        {"parse_seconds_total", stages.parse_seconds},
        {"write_queue", writer.queued + (stages.committing ? 1 : 0)},
        {"write_queue_bytes",
         writer.queued_bytes + stages.commit_pending_bytes},
        {"write_pending_pages", book_->marked_pages()},
        {"commits_total", writer.commits},
        {"records_written_total", writer.records},
        {"warc_records_total", writer.warc_records},
        {"warc_deduplicated_total", writer.warc_deduped}}},
      {"limited_by", LimitName(limited_by)},
      {"limits", limits},
      {"recovered",
       {{"pages", recovery_->pages},
        {"pages_reset", recovery_->pages_reset},
        {"corrupt", recovery_->corrupt}}},
      {"cluster", sources_.cluster ? sources_.cluster() : nlohmann::json()},
      {"rules", RulesStatusJson()},
  };
}

nlohmann::json StatusViews::RulesStatusJson() const {
  nlohmann::json out = nlohmann::json::array();
  if (rules_->empty()) return out;
  // One byte a page read: ~10 ms at 10M pages, beside the summary's pass.
  const std::vector<uint64_t> pages = sched_->PagesPerRule();
  for (size_t i = 0; i < rules_->rules().size(); ++i) {
    out.push_back({{"name", rules_->rules()[i].name},
                   {"pages", i + 1 < pages.size() ? pages[i + 1] : 0}});
  }
  return out;
}

void StatusViews::PublishSnapshot() {
  nlohmann::json status = StatusJson();
  status["snapshot_unix"] = UnixNow();
  auto snapshot = std::make_shared<const nlohmann::json>(std::move(status));
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  snapshot_ = std::move(snapshot);
}

std::shared_ptr<const nlohmann::json> StatusViews::snapshot() const {
  std::lock_guard<std::mutex> lock(snapshot_mu_);
  return snapshot_;
}

std::string StatusViews::MetricsText() const {
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
  metric("freshd_in_flight_per_host_cap", "gauge",
         "Connections one host may hold now (its fair share while hosts "
         "contend, else max_in_flight_per_host).",
         s["in_flight"]["per_host_cap"].get<double>());
  metric("freshd_in_flight_hosts_over_parse_share", "gauge",
         "Hosts over their fair share of parse time, last window.",
         s["in_flight"]["hosts_over_parse_share"].get<double>());
  metric("freshd_parse_queue", "gauge", "Bodies waiting for the parse pool.",
         s["stages"]["parse_queue"].get<double>());
  metric("freshd_parse_cpu_seconds_total", "counter",
         "CPU seconds the parse pool spent on bodies.",
         s["stages"]["parse_seconds_total"].get<double>());
  metric("freshd_write_queue_bytes", "gauge",
         "Bytes waiting for the writer (WARC payloads).",
         s["stages"]["write_queue_bytes"].get<double>());
  metric("freshd_store_commits_total", "counter",
         "Group commits written to the store.",
         s["stages"]["commits_total"].get<double>());
  metric("freshd_store_errors_total", "counter",
         "Failed store commits and WARC writes.",
         s["store_errors_total"].get<double>());
  metric("freshd_validator_read_failures_total", "counter",
         "Fetches sent unconditionally because the page's stored validators "
         "could not be read.",
         s["validator_read_failures_total"].get<double>());
  out +=
      "# HELP freshd_fetch_outcomes_total Fetch outcomes by class.\n"
      "# TYPE freshd_fetch_outcomes_total counter\n";
  for (const auto& [name, count] : Fetches(UnixNow()).outcomes) {
    out += "freshd_fetch_outcomes_total{class=\"" + name + "\"} " +
           std::to_string(count) + "\n";
  }
  if (sources_.cluster_metrics) sources_.cluster_metrics(s, &out);
  PrometheusText more;
  AppendOperatorMetrics(more);
  return out + more.Take();
}

Result<nlohmann::json> StatusViews::PageJson(std::string_view raw_url) const {
  auto url = parse::NormalizeUrl(raw_url);
  if (!url.ok()) return url.status();
  // Checked against the stored URL: never another URL's page.
  std::optional<sched::PageId> known = book_->FindExact(url.value());
  if (!known) {
    // A duplicate URL collapsed into a page: it says which (PageBook
    // "Duplicates").
    if (auto alias = book_->AliasOf(url.value())) {
      return nlohmann::json{
          {"url", url.value()},
          {"alias_of", alias->page_url},
          {"alias_reason", AliasReasonName(alias->reason)},
          {"alias_page_removed", sched_->removed(alias->page)}};
    }
    return Status::NotFound("unknown URL");
  }
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
    double deadline = s.last_fetch + options_.max_interval_s;
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
      {"signal_sources", PageSignalSourcesJson(id)},
      {"fresh_probability", sched_->FreshProbability(id, now)},
      {"value", value},
      {"in_flight", s.in_flight()},
      {"next_expected_fetch_unix", next},
      {"rule", RuleJson(id)},
  };
}

nlohmann::json StatusViews::PageSignalSourcesJson(sched::PageId page) const {
  // The signal policies only: the page's signals since its fetch by source,
  // with its host's estimate of each source it has seen.
  const sched::SourceSignals* counts = sched_->SourceSignalsOf(page);
  if (counts == nullptr) return nullptr;
  const sched::HostId host = sched_->page(page).host;
  const sched::HostStats* stats = sched_->hosts().Find(host);
  nlohmann::json out = nlohmann::json::object();
  for (int i = 0; i < sched::kSignalSources; ++i) {
    const auto source = static_cast<sched::SignalSource>(i);
    const int n = counts->counts.count(source);
    const bool seen = stats != nullptr && ((stats->sources_seen() >> i) & 1);
    if (n == 0 && !seen) continue;
    nlohmann::json entry = {{"signals_since_fetch", n}};
    if (seen) {
      const sched::SignalParams p = sched_->hosts().SourceParams(host, source);
      const double signalled = p.alpha * p.delta;
      entry["host_recall"] = p.alpha;
      entry["host_false_signal_rate_per_day"] = p.nu * kDay;
      entry["host_precision"] =
          signalled + p.nu > 0 ? nlohmann::json(signalled / (signalled + p.nu))
                               : nlohmann::json(nullptr);
      entry["weight"] = sched_->hosts().SourceWeight(host, source);
    }
    out[sched::SignalSourceName(source)] = std::move(entry);
  }
  return out;
}

nlohmann::json StatusViews::RuleJson(sched::PageId page) const {
  const uint8_t rule = sched_->RuleOf(page);
  if (rule == 0 || rule > rules_->rules().size()) return nullptr;
  const RuleConfig& r = rules_->rules()[rule - 1];
  const auto or_null = [](double v) {
    return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr);
  };
  return {{"name", r.name},
          {"min_interval_s", or_null(r.min_interval_s)},
          {"max_interval_s", or_null(r.max_interval_s)},
          {"importance", or_null(r.importance)}};
}

void StatusViews::NoteFetch(sched::PageId page, const fetch::FetchResult& r,
                            double now) {
  const sched::HostId host = sched_->page(page).host;
  if (!fetch_metrics_.Record(host, r, now)) return;
  // The first error of its class on this host: worth a line at info.
  spdlog::log(r.outcome == fetch::OutcomeClass::kRobotsDenied
                  ? spdlog::level::info
                  : spdlog::level::warn,
              "host {}: first {} error: {}{}{}{}", book_->hosts().Name(host),
              fetch::OutcomeName(r.outcome), r.url,
              r.status != 0 ? " HTTP " + std::to_string(r.status) : "",
              r.detail.empty() ? "" : ": ", r.detail);
}

void StatusViews::OperatorTick(double now) {
  std::shared_ptr<const nlohmann::json> status = snapshot();
  if (!status) return;
  if (options_.progress_s > 0 && now - last_progress_ >= options_.progress_s) {
    if (last_progress_ > 0) spdlog::info("progress: {}", ProgressLine(*status));
    last_progress_ = now;
  }
  if (!history_.Due(now)) return;
  history_.Add(PointOf(*status, now));
  SdNotify("STATUS=" + ProgressLine(*status));
  ScanDir(options_.store_path, &store_disk_.bytes, &store_disk_.files);
  ScanDir(options_.warc_dir, &warc_disk_.bytes, &warc_disk_.files);
}

nlohmann::json StatusViews::HistoryJson() const {
  const double now = UnixNow();
  std::shared_ptr<const nlohmann::json> status = snapshot();
  return history_.Json(status ? PointOf(*status, now)
                              : HistoryPoint{now, RateTarget()});
}

nlohmann::json StatusViews::HostsJson(size_t offset, size_t limit,
                                      std::string_view sort) const {
  const size_t n = book_->hosts().size();
  const double now_steady = SteadyNow();  // the network stage's clock
  const double unix_now = UnixNow();
  std::vector<sched::HostId> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<sched::HostId>(i);
  auto pages = [&](sched::HostId h) -> double {
    const sched::HostStats* stats = sched_->hosts().Find(h);
    return stats != nullptr ? stats->pages() : 0;
  };
  auto key = [&](sched::HostId h) -> double {
    const HostCounters c = fetch_metrics_.host(h);
    if (sort == "fetches") return static_cast<double>(c.fetches);
    if (sort == "errors") return static_cast<double>(c.errors);
    if (sort == "bytes") return static_cast<double>(c.bytes);
    return pages(h);
  };
  const size_t end = std::min(n, offset + limit);
  if (offset < end) {
    auto less = [&](sched::HostId a, sched::HostId b) {
      if (sort == "host")
        return book_->hosts().Name(a) < book_->hosts().Name(b);
      const double ka = key(a), kb = key(b);
      return ka != kb ? ka > kb : a < b;
    };
    std::partial_sort(order.begin(), order.begin() + end, order.end(), less);
  }
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = offset; i < end; ++i) {
    const sched::HostId h = order[i];
    const HostCounters c = fetch_metrics_.host(h);
    const HostGate gate = Gate(h);
    const double next = gate.next_allowed;
    nlohmann::json classes = nlohmann::json::array();
    for (int k = 0; k <= static_cast<int>(fetch::kLastOutcomeClass); ++k) {
      if (c.error_classes & (1u << k)) {
        classes.push_back(std::string(
            fetch::OutcomeName(static_cast<fetch::OutcomeClass>(k))));
      }
    }
    rows.push_back({
        {"host", book_->hosts().Name(h)},
        {"pages", pages(h)},
        {"fetches", c.fetches},
        {"errors", c.errors},
        {"bytes", c.bytes},
        {"error_classes", std::move(classes)},
        {"in_flight", gate.in_flight},
        {"backoff", c.last_host_error && next > now_steady},
        {"next_allowed_unix",
         next > now_steady ? nlohmann::json(unix_now + (next - now_steady))
                           : nlohmann::json(nullptr)},
    });
  }
  return {{"total", n},
          {"offset", offset},
          {"limit", limit},
          {"sort", sort},
          {"hosts", std::move(rows)}};
}

nlohmann::json StatusViews::OverviewJson() const {
  const double now = UnixNow();
  // The pages due next: the highest values now (a pass over the pages,
  // cached by its cost like the summary; beyond kStatusSlicedPages, the
  // last sliced pass's).
  const double steady = SteadyNow();
  const std::vector<std::pair<double, sched::PageId>>* due = &sliced_due_;
  if (sched_->size() > kStatusSlicedPages) {
    due_wanted_until_ = steady + kDueWantedS;  // AdvancePasses
  } else if ((due = due_cache_.Get(steady)) == nullptr) {
    std::vector<std::pair<double, sched::PageId>> top;
    AddDueValues(0, static_cast<sched::PageId>(sched_->size()), now, &top);
    std::sort(top.begin(), top.end(), std::greater<>());
    if (top.size() > kDueNext) top.resize(kDueNext);
    const double cost = SteadyNow() - steady;
    due = &due_cache_.Put(std::move(top), steady, cost);
  }
  nlohmann::json due_rows = nlohmann::json::array();
  for (const auto& [value, p] : *due) {
    if (p >= sched_->size()) continue;
    const sched::PageState& s = sched_->page(p);
    // A page never fetched is valued [sched] new_page_value (a day of
    // freshness, 86,400): "new" says so, the page shows it instead.
    due_rows.push_back(
        {{"url", book_->url(p)},
         {"value", value},
         {"new", !s.fetched()},
         {"fetches", s.fetches},
         {"last_fetch_unix", s.fetched() ? nlohmann::json(s.last_fetch)
                                         : nlohmann::json(nullptr)}});
  }
  nlohmann::json recent = nlohmann::json::array();
  const auto& fetches = fetch_metrics_.recent();
  for (auto it = fetches.rbegin(); it != fetches.rend(); ++it) {
    recent.push_back({{"unix_time", it->unix_time},
                      {"url", it->url},
                      {"outcome", it->outcome},
                      {"status", it->status},
                      {"elapsed_ms", 1e3 * it->elapsed_s},
                      {"bytes", it->bytes}});
  }
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [name, count] : Fetches(now).outcomes) {
    if (name != "ok" && name != "not-modified") errors[name] = count;
  }
  return {{"errors", std::move(errors)},
          {"due_next", std::move(due_rows)},
          {"recent_fetches", std::move(recent)}};
}

void StatusViews::AppendOperatorMetrics(PrometheusText& out) const {
  fetch_metrics_.AppendText(out);
  const double now_steady = SteadyNow();  // the network stage's clock
  double backoff = 0;
  for (size_t h = 0; h < book_->hosts().size(); ++h) {
    const auto id = static_cast<sched::HostId>(h);
    if (fetch_metrics_.host(id).last_host_error &&
        Gate(id).next_allowed > now_steady) {
      ++backoff;
    }
  }
  out.Gauge("freshd_hosts_backoff",
            "Hosts whose last fetch was a host error and whose gate is "
            "closed (back-off, Retry-After).",
            backoff);
  const StageFigures stages = Stages();
  out.Gauge("freshd_fetches_on_network",
            "Fetches on the network (not yet handed to the parse pool).",
            static_cast<double>(stages.on_network));
  out.Gauge("freshd_parse_queue_bytes",
            "Body bytes waiting for the parse pool.",
            static_cast<double>(stages.parse_bytes));
  const StoreWriter::Stats& writer = stages.writer;
  out.Gauge("freshd_write_queue", "Jobs waiting for the writer.",
            static_cast<double>(writer.queued + (stages.committing ? 1 : 0)));
  out.Gauge("freshd_write_pending_pages",
            "Page records marked and not yet handed to the writer.",
            static_cast<double>(book_->marked_pages()));
  out.Counter("freshd_store_records_written_total",
              "Records committed to the store.",
              static_cast<double>(writer.records));
  out.Counter("freshd_warc_records_total", "Fetches archived as WARC records.",
              static_cast<double>(writer.warc_records));
  out.Counter("freshd_warc_deduplicated_total",
              "Ok responses archived as revisit records: their payload "
              "digest was archived before ([store] warc_dedup).",
              static_cast<double>(writer.warc_deduped));
  out.Gauge("freshd_store_bytes", "Bytes in the store's directory.",
            store_disk_.bytes);
  out.Gauge("freshd_store_files", "Files in the store's directory.",
            store_disk_.files);
  out.Gauge("freshd_warc_bytes", "Bytes in [store] warc_dir.",
            warc_disk_.bytes);
  out.Gauge("freshd_warc_files", "Files in [store] warc_dir.",
            warc_disk_.files);
  out.Counter("freshd_sitemaps_fetched_total", "Sitemaps fetched.",
              static_cast<double>(
                  sources_.signals ? sources_.signals().sitemaps_fetched : 0));
  if (sources_.site_feed_metrics) sources_.site_feed_metrics(out);
  if (sources_.signal_source_metrics) sources_.signal_source_metrics(out);
  if (sources_.indexnow_metrics) sources_.indexnow_metrics(out);
  if (sources_.websub_metrics) sources_.websub_metrics(out);
  if (sources_.controls_metrics) sources_.controls_metrics(out);
  if (sources_.frontier_metrics) sources_.frontier_metrics(out);
  AppendProcessMetrics(out);
  AppendBuildInfo(out, FRESHD_VERSION);
}

}  // namespace freshd::daemon

// CrawlLoop's operator views: the status page's JSON (/hosts, /history,
// /overview), the /metrics families beyond the status JSON's, and the
// operator's housekeeping (history points, the progress line, systemd's
// STATUS=, disk use). All on the scheduler's thread.

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/clock.h"
#include "daemon/crawl_loop.h"
#include "daemon/operator_log.h"
#include "daemon/sd_notify.h"
#include "spdlog/spdlog.h"

namespace freshd::daemon {
namespace {

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

void CrawlLoop::NoteFetch(sched::PageId page, const fetch::FetchResult& r,
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

void CrawlLoop::OperatorTick(double now) {
  std::shared_ptr<const nlohmann::json> status = status_snapshot();
  if (!status) return;
  if (config_.log.progress_s > 0 &&
      now - last_progress_ >= config_.log.progress_s) {
    if (last_progress_ > 0) spdlog::info("progress: {}", ProgressLine(*status));
    last_progress_ = now;
  }
  if (!history_.Due(now)) return;
  history_.Add(PointOf(*status, now));
  SdNotify("STATUS=" + ProgressLine(*status));
  ScanDir(config_.store.path, &store_disk_.bytes, &store_disk_.files);
  ScanDir(config_.store.warc_dir, &warc_disk_.bytes, &warc_disk_.files);
}

nlohmann::json CrawlLoop::HistoryJson() const {
  const double now = UnixNow();
  std::shared_ptr<const nlohmann::json> status = status_snapshot();
  return history_.Json(status ? PointOf(*status, now)
                              : HistoryPoint{now, config_.budget.rate});
}

nlohmann::json CrawlLoop::HostsJson(size_t offset, size_t limit,
                                    std::string_view sort) const {
  const size_t n = book_->hosts().size();
  const double now_steady = NetworkStage::Now();
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
    const double next = dispatcher_->slots().next_allowed(h);
    nlohmann::json classes = nlohmann::json::array();
    for (int k = 0; k <= static_cast<int>(fetch::OutcomeClass::kProtocol);
         ++k) {
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
        {"in_flight", dispatcher_->slots().in_flight(h)},
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

nlohmann::json CrawlLoop::OverviewJson() const {
  const double now = UnixNow();
  // The pages due next: the highest values now (a pass over the pages,
  // cached by its cost like the summary; beyond kStatusSlicedPages, the
  // last sliced pass's).
  const double steady = SteadyNow();
  const std::vector<std::pair<double, sched::PageId>>* due = &sliced_due_;
  if (sched_->size() > kStatusSlicedPages) {
    due_wanted_until_ = steady + kDueWantedS;  // AdvanceStatusPasses
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
  for (const auto& [name, count] : observer_->outcomes()) {
    if (name != "ok" && name != "not-modified") errors[name] = count;
  }
  return {{"errors", std::move(errors)},
          {"due_next", std::move(due_rows)},
          {"recent_fetches", std::move(recent)}};
}

void CrawlLoop::AppendOperatorMetrics(PrometheusText& out) const {
  fetch_metrics_.AppendText(out);
  const double now_steady = NetworkStage::Now();
  double backoff = 0;
  for (size_t h = 0; h < book_->hosts().size(); ++h) {
    const auto id = static_cast<sched::HostId>(h);
    if (fetch_metrics_.host(id).last_host_error &&
        dispatcher_->slots().next_allowed(id) > now_steady) {
      ++backoff;
    }
  }
  out.Gauge("freshd_hosts_backoff",
            "Hosts whose last fetch was a host error and whose gate is "
            "closed (back-off, Retry-After).",
            backoff);
  out.Gauge("freshd_fetches_on_network",
            "Fetches on the network (not yet handed to the parse pool).",
            static_cast<double>(dispatcher_->on_network()));
  out.Gauge("freshd_parse_queue_bytes",
            "Body bytes waiting for the parse pool.",
            static_cast<double>(parse_->bytes()));
  const StoreWriter::Stats writer = writer_->stats();
  out.Gauge(
      "freshd_write_queue", "Jobs waiting for the writer.",
      static_cast<double>(writer.queued + (committer_->running() ? 1 : 0)));
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
              static_cast<double>(intake_->sitemaps_fetched()));
  intake_->AppendSiteFeedMetrics(out);
  AppendProcessMetrics(out);
  AppendBuildInfo(out, FRESHD_VERSION);
}

}  // namespace freshd::daemon

#include "daemon/recovery.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "daemon/page_codec.h"
#include "parse/url.h"
#include "sched/state_codec.h"

namespace freshd::daemon {
namespace {

// Collects what did not decode; says whether the scan may go on.
class CorruptLog {
 public:
  CorruptLog(const RecoveryOptions& options, RecoveryReport* report)
      : options_(options), report_(report) {}

  // Records one corrupt record; returns Corruption if that must abort.
  Status Add(std::string key, const Status& error) {
    ++report_->corrupt;
    if (report_->corrupt_records.size() < options_.max_reported) {
      report_->corrupt_records.push_back({key, error.ToString()});
    }
    if (options_.abort_on_corrupt) {
      return Status::Corruption("recovery: " + key + ": " + error.ToString());
    }
    return Status::OK();
  }

 private:
  const RecoveryOptions& options_;
  RecoveryReport* report_;
};

// Records the store's own decode failures: the scan counts them but does
// not name the keys it skipped, so one entry gives the count.
void AddStoreCorruption(std::string_view kind, const store::ScanStats& stats,
                        RecoveryReport* report) {
  if (stats.corrupt == 0) return;
  report->corrupt += stats.corrupt;
  report->corrupt_records.push_back(
      {"store " + std::string(kind),
       std::to_string(stats.corrupt) +
           " record values failed to decode (skipped by the store scan)"});
}

// A damaged block the scan stepped over: its records are not counted
// anywhere, so the page count tells how many pages it held.
void AddReadError(std::string_view kind, const store::ScanStats& stats,
                  RecoveryReport* report) {
  if (stats.read_error.empty()) return;
  report->store_damage.push_back(
      std::string(kind) + " records: LevelDB skipped damaged data (" +
      stats.read_error + "); the records in the damaged block are lost");
}

// `spread`: the saved host-rate spread, to restore once every host is.
Status RestoreHosts(const store::PageStore& store, sched::Scheduler* scheduler,
                    HostBook* hosts, CorruptLog& log, RecoveryReport* report,
                    bool skip_corrupt,
                    std::optional<sched::HostSpreadState>* spread) {
  Status failure;
  store::ScanStats stats;
  Status scan = store.ForEachHost(
      [&](const store::HostRecord& record) {
        if (record.host == kGlobalStatsHost) {
          Result<sched::SavedGlobals> globals =
              sched::DecodeSavedGlobals(record.pooled_estimates);
          if (!globals.ok()) {
            failure = log.Add("host " + record.host, globals.status());
            return failure.ok();
          }
          scheduler->mutable_hosts().RestoreGlobal(globals->stats);
          report->threshold = globals->threshold;
          scheduler->RestoreThreshold(globals->threshold);
          *spread = globals->spread;
          report->global_restored = true;
          return true;
        }
        Result<sched::HostStats> decoded =
            record.pooled_estimates.empty()
                ? Result<sched::HostStats>(sched::HostStats{})
                : sched::DecodeHostStats(record.pooled_estimates);
        if (!decoded.ok()) {
          failure = log.Add("host " + record.host, decoded.status());
          return failure.ok();
        }
        Result<sched::HostId> id = hosts->Intern(record.host);
        if (!id.ok()) {
          failure = id.status();
          return false;
        }
        // The fetch state as stored, so the next host record keeps it.
        (void)hosts->SetFetchState(*id, record.fetch_state);
        if (!record.pooled_estimates.empty()) {
          scheduler->mutable_hosts().Restore(*id, *decoded);
          ++report->hosts;
        }
        return true;
      },
      &stats, skip_corrupt);
  if (!failure.ok()) return failure;
  if (!scan.ok()) return scan;
  AddStoreCorruption("host", stats, report);
  AddReadError("host", stats, report);
  return Status::OK();
}

Status RestorePages(const store::PageStore& store, sched::Scheduler* scheduler,
                    HostBook* hosts, const RestoredUrlFn& on_url,
                    CorruptLog& log, RecoveryReport* report, bool skip_corrupt,
                    RecoveryProgress* progress) {
  Status failure;
  store::ScanStats stats;
  Status scan = store.ForEachPage(
      [&](const store::PageRecord& record) {
        Result<sched::HostId> host =
            hosts->Intern(parse::UrlAuthority(record.url));
        if (!host.ok()) {
          if (host.status().code() == Status::Code::kResourceExhausted) {
            failure = host.status();
          } else {  // no authority: not a URL the daemon wrote
            failure = log.Add("page " + record.url, host.status());
          }
          return failure.ok();
        }
        DecodedPage decoded = DecodePageRecord(record);
        if (!decoded.error.ok()) {
          // Keep the URL; it restarts as never fetched.
          failure = log.Add("page " + record.url, decoded.error);
          if (!failure.ok()) return false;
        }
        sched::SavedPage& saved = decoded.saved;
        const bool reset = decoded.reset;
        saved.state.host = *host;
        Result<sched::PageId> id = scheduler->RestorePage(
            saved.state, std::move(saved.profiles), saved.recent, saved.rate);
        if (!id.ok()) {
          failure = id.status();
          return false;
        }
        on_url(*id, record.url);
        std::vector<PageMeta>& metas = report->metas;
        if (metas.size() <= *id) metas.resize(static_cast<size_t>(*id) + 1);
        metas[*id] = std::move(decoded.meta);
        ++(reset ? report->pages_reset : report->pages);
        if (progress != nullptr &&
            (report->pages + report->pages_reset) % kProgressEvery == 0) {
          progress->pages_restored.store(report->pages + report->pages_reset,
                                         std::memory_order_relaxed);
        }
        return true;
      },
      &stats, skip_corrupt);
  if (!failure.ok()) return failure;
  if (!scan.ok()) return scan;
  AddStoreCorruption("page", stats, report);
  AddReadError("page", stats, report);
  return Status::OK();
}

}  // namespace

Status PersistPage(const sched::Scheduler& scheduler, sched::PageId page,
                   std::string_view url, const PageMeta& meta,
                   const ColdFields& cold, store::StoreBatch* batch) {
  store::PageRecord record;
  if (Status s = EncodePageRecord(scheduler, page, url, meta, cold, &record);
      !s.ok()) {
    return s;
  }
  return batch->PutPage(record);
}

Status PersistHostOnly(const sched::Scheduler& scheduler, const HostBook& hosts,
                       sched::HostId host, store::HostRecord base,
                       store::StoreBatch* batch) {
  if (host >= hosts.size()) {
    return Status::InvalidArgument("persist: unknown host id");
  }
  base.host = hosts.Name(host);
  const sched::HostStats* stats = scheduler.hosts().Find(host);
  base.pooled_estimates =
      stats != nullptr ? sched::EncodeHostStats(*stats) : std::string();
  return batch->PutHost(base);
}

Status PersistGlobals(const sched::Scheduler& scheduler,
                      store::StoreBatch* batch) {
  const sched::HostPool& pool = scheduler.hosts();
  store::HostRecord global;
  global.host = std::string(kGlobalStatsHost);
  global.pooled_estimates = sched::EncodeSavedGlobals(
      pool.global(), scheduler.threshold(), pool.spread_state());
  return batch->PutHost(global);
}

Status PersistHost(const sched::Scheduler& scheduler, const HostBook& hosts,
                   sched::HostId host, store::HostRecord base,
                   store::StoreBatch* batch) {
  if (Status s =
          PersistHostOnly(scheduler, hosts, host, std::move(base), batch);
      !s.ok()) {
    return s;
  }
  return PersistGlobals(scheduler, batch);
}

Result<RecoveryReport> RebuildScheduler(const store::PageStore& store,
                                        sched::Scheduler* scheduler,
                                        HostBook* hosts,
                                        const RestoredUrlFn& on_url,
                                        const RecoveryOptions& options) {
  RecoveryReport report;
  report.expected_pages =
      std::max(store.page_count(), store.pages_before_damage());
  report.store_damage = store.open_damage();
  report.store_migrations = store.migrations();
  CorruptLog log(options, &report);
  const bool skip = !options.abort_on_corrupt;
  std::optional<sched::HostSpreadState> spread;
  if (Status s =
          RestoreHosts(store, scheduler, hosts, log, &report, skip, &spread);
      !s.ok()) {
    return s;
  }
  if (spread) scheduler->mutable_hosts().RestoreSpread(*spread);
  RecoveryProgress* progress = options.progress;
  if (progress != nullptr) {
    progress->expected_pages.store(report.expected_pages,
                                   std::memory_order_relaxed);
    progress->hosts_restored.store(report.hosts, std::memory_order_relaxed);
  }
  scheduler->BeginRestore();
  // Room for the store's count (at most max_pages): no array doubles.
  const auto room = static_cast<size_t>(
      std::min<uint64_t>(scheduler->size() + report.expected_pages,
                         scheduler->options().max_pages));
  scheduler->Reserve(room);
  report.metas.reserve(room);
  Status pages = RestorePages(store, scheduler, hosts, on_url, log, &report,
                              skip, progress);
  // (After an error too: the scheduler is left usable.)
  if (pages.ok() && options.clock) {
    scheduler->FinishRestore(options.clock());
  } else {
    scheduler->FinishRestore();
  }
  if (progress != nullptr) {
    progress->pages_restored.store(report.pages + report.pages_reset,
                                   std::memory_order_relaxed);
  }
  if (!pages.ok()) return pages;
  for (std::string& line : store.damage_log()) {
    report.store_damage.push_back("LevelDB: " + std::move(line));
  }
  return report;
}

Result<RecoveryReport> RebuildScheduler(const store::PageStore& store,
                                        sched::Scheduler* scheduler,
                                        HostBook* hosts,
                                        std::vector<std::string>* urls,
                                        const RecoveryOptions& options) {
  return RebuildScheduler(
      store, scheduler, hosts,
      [urls](sched::PageId id, std::string_view url) {
        if (urls->size() <= id) urls->resize(static_cast<size_t>(id) + 1);
        (*urls)[id] = std::string(url);
      },
      options);
}

}  // namespace freshd::daemon

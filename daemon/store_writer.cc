#include "daemon/store_writer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/clock.h"
#include "daemon/warc_archive.h"
#include "parse/url.h"
#include "spdlog/spdlog.h"

namespace freshd::daemon {
namespace {

uint64_t WarcBytes(const WriterJob& job) {
  uint64_t bytes = 0;
  for (const WarcItem& item : job.warc) {
    bytes += item.result.raw_body.size() + item.result.raw_headers.size();
  }
  return bytes;
}

}  // namespace

StoreWriter::StoreWriter(store::PageStore* store, store::WarcWriter* warc,
                         double sync_interval_s, FeedConfig feed,
                         ArchivePolicy archive)
    : store_(store),
      warc_(warc),
      sync_interval_s_(sync_interval_s),
      feed_(feed),
      archive_(archive) {}

StoreWriter::~StoreWriter() { (void)Stop(); }

void StoreWriter::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_ || stopping_) return;
  running_ = true;
  thread_ = std::thread([this] { Run(); });
}

void StoreWriter::Submit(WriterJob job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ && !stopping_) {
      queued_bytes_ += WarcBytes(job);
      queue_.push_back(std::move(job));
      wake_.notify_one();
      return;
    }
  }
  // Not running (before Start, or after Stop): write on this thread.
  std::vector<WriterJob> jobs;
  jobs.push_back(std::move(job));
  Write(jobs);
}

size_t StoreWriter::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

StoreWriter::Stats StoreWriter::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.queued = queue_.size();
  s.queued_bytes = queued_bytes_;
  return s;
}

Status StoreWriter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_) return Status::OK();
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;
  }
  return store_->MaybeSync(UnixNow(), /*force=*/true);
}

void StoreWriter::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Wake for work, or at the sync interval to sync what was committed.
    const auto wait = std::chrono::duration<double>(
        sync_interval_s_ > 0 ? std::min(sync_interval_s_, 1.0) : 1.0);
    wake_.wait_for(lock, wait, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_) return;
      lock.unlock();
      if (Status s = store_->MaybeSync(UnixNow()); !s.ok()) {
        spdlog::error("store sync: {}", s.ToString());
      }
      lock.lock();
      continue;
    }
    std::vector<WriterJob> jobs(std::make_move_iterator(queue_.begin()),
                                std::make_move_iterator(queue_.end()));
    queue_.clear();
    queued_bytes_ = 0;
    lock.unlock();
    Write(jobs);
    lock.lock();
  }
}

void StoreWriter::Write(std::vector<WriterJob>& jobs) {
  const double cpu0 = ThreadCpuNow();
  Status first_error;
  uint64_t warc_records = 0, warc_deduped = 0, errors = 0, feed_events = 0;
  store::StoreBatch batch;
  // What each job's WARC items left: where the feed events point.
  std::vector<std::vector<store::WarcWritten>> written(jobs.size());
  Archive(jobs, &written, &batch, &first_error, &warc_records, &warc_deduped,
          &errors);
  for (WriterJob& job : jobs) {
    batch.Append(std::move(job.batch));
    feed_events += job.feed.size();
  }
  std::vector<store::FeedEvent> events;  // for the feed hook
  if (feed_.enabled) {
    AddFeed(jobs, written, &batch, feed_hook_ ? &events : nullptr);
  }
  const uint64_t records = batch.operations();
  std::vector<CommittedPage> pages;  // for the hook (Commit clears batch)
  if (committed_hook_) {
    batch.ForEachPagePut(
        [&](uint64_t key, std::string_view url, std::string_view value) {
          pages.push_back({key, std::string(url), std::string(value)});
        });
  }
  if (!batch.empty()) {
    Status s = store_->Commit(batch, UnixNow());
    if (!s.ok()) {
      ++errors;
      spdlog::error("store: {}", s.ToString());
      first_error = s;
      feed_events = 0;
    } else {
      if (committed_hook_ && !pages.empty()) committed_hook_(pages);
      if (feed_hook_ && !events.empty()) {
        // This batch's events are the newest: the writer alone adds them.
        uint64_t seq = store_->feed_bounds().newest - events.size();
        for (store::FeedEvent& e : events) e.seq = ++seq;
        feed_hook_(events);
      }
    }
  }
  if (Status s = store_->MaybeSync(UnixNow()); !s.ok()) {
    ++errors;
    spdlog::error("store sync: {}", s.ToString());
  }
  if (!feed_.enabled) feed_events = 0;
  events_since_prune_ += feed_events;
  if (feed_.enabled) MaybePruneFeed(UnixNow());
  if (warc_ != nullptr && archive_.dedup_entries > 0)
    MaybePruneDigests(UnixNow());
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.feed_events += feed_events;
    stats_.jobs += jobs.size();
    stats_.commits += records > 0 ? 1 : 0;
    stats_.records += records;
    stats_.warc_records += warc_records;
    stats_.warc_deduped += warc_deduped;
    stats_.errors += errors;
    stats_.busy_s += ThreadCpuNow() - cpu0;
  }
  for (WriterJob& job : jobs) {
    if (job.done) job.done(first_error);
  }
}

void StoreWriter::Archive(std::vector<WriterJob>& jobs,
                          std::vector<std::vector<store::WarcWritten>>* written,
                          store::StoreBatch* batch, Status* first_error,
                          uint64_t* records, uint64_t* deduped,
                          uint64_t* errors) {
  // Captures written earlier in this group (the store does not hold them
  // yet): by payload digest, and by page.
  std::unordered_map<std::string, store::WarcCapture> group_digests;
  std::unordered_map<std::string, store::WarcCapture> group_last;
  const bool dedup = archive_.dedup_entries > 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    (*written)[j].resize(jobs[j].warc.size());
    if (warc_ == nullptr) continue;
    for (size_t i = 0; i < jobs[j].warc.size(); ++i) {
      const WarcItem& item = jobs[j].warc[i];
      const fetch::FetchResult& r = item.result;
      const bool ok = r.outcome == fetch::OutcomeClass::kOk;
      ArchiveContext refs;
      refs.errors = archive_.errors;
      store::WarcCapture original, previous;
      if (ok) {
        refs.payload_digest = store::WarcSha1Digest(r.raw_body);
        if (dedup && !r.raw_body.empty()) {
          if (auto g = group_digests.find(refs.payload_digest);
              g != group_digests.end()) {
            original = g->second;
            refs.original = &original;
          } else if (auto c = store_->GetDigestCapture(refs.payload_digest);
                     c.ok()) {
            original = std::move(c).value();
            refs.original = &original;
          }
        }
      } else if (r.outcome == fetch::OutcomeClass::kNotModified) {
        if (auto g = group_last.find(r.final_url); g != group_last.end()) {
          previous = g->second;
          refs.previous = &previous;
        } else if (auto c = store_->GetLastCapture(parse::UrlKey(r.final_url),
                                                   r.final_url);
                   c.ok()) {
          previous = std::move(c).value();
          refs.previous = &previous;
        }
      }
      store::WarcWritten& w = (*written)[j][i];
      Status s = ArchiveFetch(*warc_, r, item.started_unix, &w, refs);
      ++*records;
      if (!s.ok()) {
        ++*errors;
        spdlog::error("warc: {}: {}", r.url, s.ToString());
        if (first_error->ok()) *first_error = s;
        continue;
      }
      if (!ok || w.file.empty()) continue;
      // The capture that holds this page's payload now.
      store::WarcCapture capture;
      if (refs.original != nullptr) {
        ++*deduped;
        capture = original;
      } else {
        capture.record_id = w.response_id;
        capture.target_uri = r.final_url;
        capture.date = item.started_unix;
        capture.payload_digest = w.payload_digest;
        if (dedup && !r.raw_body.empty()) {
          if (Status p = batch->PutDigestCapture(capture); !p.ok()) {
            spdlog::error("warc: digest index: {}: {}", r.final_url,
                          p.ToString());
          } else {
            group_digests[capture.payload_digest] = capture;
          }
        }
      }
      if (Status p = batch->PutLastCapture(parse::UrlKey(r.final_url),
                                           r.final_url, capture);
          !p.ok()) {
        spdlog::error("warc: last capture: {}: {}", r.final_url, p.ToString());
      } else {
        group_last[r.final_url] = std::move(capture);
      }
    }
  }
}

void StoreWriter::MaybePruneDigests(double now) {
  const uint64_t slack = std::max<uint64_t>(archive_.dedup_entries / 100, 1);
  if (store_->digest_entries() <= archive_.dedup_entries + slack) return;
  auto pruned = store_->PruneDigests(archive_.dedup_entries, now);
  if (!pruned.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.errors;
    spdlog::error("warc: digest index prune: {}", pruned.status().ToString());
  }
}

void StoreWriter::AddFeed(
    std::vector<WriterJob>& jobs,
    const std::vector<std::vector<store::WarcWritten>>& written,
    store::StoreBatch* batch, std::vector<store::FeedEvent>* added) {
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (FeedItem& item : jobs[j].feed) {
      store::FeedEvent& e = item.event;
      if (item.warc_item >= 0 &&
          static_cast<size_t>(item.warc_item) < written[j].size()) {
        const store::WarcWritten& w = written[j][item.warc_item];
        if (!w.file.empty()) {
          e.warc_file = std::filesystem::path(w.file).filename().string();
          e.warc_offset = w.offset;
        }
      }
      if (Status s = batch->AddFeedEvent(e); !s.ok()) {
        spdlog::error("feed: event for {}: {}", e.url, s.ToString());
      } else if (added != nullptr) {
        added->push_back(e);
      }
    }
  }
}

void StoreWriter::MaybePruneFeed(double now) {
  constexpr uint64_t kPruneEvents = 1000;
  constexpr double kPruneIntervalS = 60;
  if (events_since_prune_ < kPruneEvents && now - last_prune_ < kPruneIntervalS)
    return;
  events_since_prune_ = 0;
  last_prune_ = now;
  auto pruned = store_->PruneFeed(feed_.max_events, now - feed_.max_age_s, now);
  std::lock_guard<std::mutex> lock(mu_);
  if (!pruned.ok()) {
    ++stats_.errors;
    spdlog::error("feed: prune: {}", pruned.status().ToString());
    return;
  }
  stats_.feed_pruned += *pruned;
}

}  // namespace freshd::daemon

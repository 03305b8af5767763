#include "daemon/store_writer.h"

#include <time.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/clock.h"
#include "base/sketch.h"
#include "daemon/warc_archive.h"
#include "spdlog/spdlog.h"

namespace freshd::daemon {
namespace {

double ThreadCpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

uint64_t WarcBytes(const WriterJob& job) {
  uint64_t bytes = 0;
  for (const WarcItem& item : job.warc) {
    bytes += item.result.raw_body.size() + item.result.raw_headers.size();
  }
  return bytes;
}

}  // namespace

StoreWriter::StoreWriter(store::PageStore* store, store::WarcWriter* warc,
                         double sync_interval_s, FeedConfig feed)
    : store_(store),
      warc_(warc),
      sync_interval_s_(sync_interval_s),
      feed_(feed) {}

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
  uint64_t warc_records = 0, errors = 0, feed_events = 0;
  store::StoreBatch batch;
  // What each job's WARC items left: where the feed events point.
  std::vector<std::vector<store::WarcWritten>> written(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    WriterJob& job = jobs[j];
    written[j].resize(job.warc.size());
    if (warc_ != nullptr) {
      for (size_t i = 0; i < job.warc.size(); ++i) {
        const WarcItem& item = job.warc[i];
        Status s = ArchiveFetch(*warc_, item.result, item.started_unix,
                                &written[j][i]);
        ++warc_records;
        if (!s.ok()) {
          ++errors;
          spdlog::error("warc: {}: {}", item.result.url, s.ToString());
          if (first_error.ok()) first_error = s;
        }
      }
    }
    batch.Append(std::move(job.batch));
    feed_events += job.feed.size();
  }
  if (feed_.enabled) AddFeed(jobs, written, &batch);
  const uint64_t records = batch.operations();
  if (!batch.empty()) {
    Status s = store_->Commit(batch, UnixNow());
    if (!s.ok()) {
      ++errors;
      spdlog::error("store: {}", s.ToString());
      first_error = s;
      feed_events = 0;
    }
  }
  if (Status s = store_->MaybeSync(UnixNow()); !s.ok()) {
    ++errors;
    spdlog::error("store sync: {}", s.ToString());
  }
  if (!feed_.enabled) feed_events = 0;
  events_since_prune_ += feed_events;
  if (feed_.enabled) MaybePruneFeed(UnixNow());
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.feed_events += feed_events;
    stats_.jobs += jobs.size();
    stats_.commits += records > 0 ? 1 : 0;
    stats_.records += records;
    stats_.warc_records += warc_records;
    stats_.errors += errors;
    stats_.busy_s += ThreadCpuNow() - cpu0;
  }
  for (WriterJob& job : jobs) {
    if (job.done) job.done(first_error);
  }
}

void StoreWriter::AddFeed(
    std::vector<WriterJob>& jobs,
    const std::vector<std::vector<store::WarcWritten>>& written,
    store::StoreBatch* batch) {
  // Sketches written earlier in this group (the store does not hold them
  // yet): a page fetched twice between two commits.
  std::unordered_map<std::string, std::string> group_sketches;
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
      if (!item.sketch.empty()) {
        std::string previous;
        auto in_group = group_sketches.find(e.url);
        if (in_group != group_sketches.end()) {
          previous = in_group->second;
        } else if (auto stored = store_->GetSketch(item.url_key, e.url);
                   stored.ok()) {
          previous = std::move(stored).value();
        }
        auto now_sketch = DecodeSketch(item.sketch);
        auto old_sketch = DecodeSketch(previous);
        if (!previous.empty() && now_sketch.ok() && old_sketch.ok()) {
          e.staleness = SketchDivergence(*old_sketch, *now_sketch);
        }
        if (Status s = batch->PutSketch(item.url_key, e.url, item.sketch);
            !s.ok()) {
          spdlog::error("feed: sketch of {}: {}", e.url, s.ToString());
        }
        group_sketches[e.url] = std::move(item.sketch);
      }
      if (Status s = batch->AddFeedEvent(e); !s.ok()) {
        spdlog::error("feed: event for {}: {}", e.url, s.ToString());
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

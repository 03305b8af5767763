#include "daemon/store_writer.h"

#include <time.h>

#include <chrono>
#include <utility>

#include "base/clock.h"
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
                         double sync_interval_s)
    : store_(store), warc_(warc), sync_interval_s_(sync_interval_s) {}

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
  uint64_t warc_records = 0, errors = 0;
  store::StoreBatch batch;
  for (WriterJob& job : jobs) {
    if (warc_ != nullptr) {
      for (const WarcItem& item : job.warc) {
        Status s = ArchiveFetch(*warc_, item.result, item.started_unix);
        ++warc_records;
        if (!s.ok()) {
          ++errors;
          spdlog::error("warc: {}: {}", item.result.url, s.ToString());
          if (first_error.ok()) first_error = s;
        }
      }
    }
    batch.Append(std::move(job.batch));
  }
  const uint64_t records = batch.operations();
  if (!batch.empty()) {
    Status s = store_->Commit(batch, UnixNow());
    if (!s.ok()) {
      ++errors;
      spdlog::error("store: {}", s.ToString());
      first_error = s;
    }
  }
  if (Status s = store_->MaybeSync(UnixNow()); !s.ok()) {
    ++errors;
    spdlog::error("store sync: {}", s.ToString());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
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

}  // namespace freshd::daemon

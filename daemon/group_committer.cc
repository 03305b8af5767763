#include "daemon/group_committer.h"

#include <boost/asio/post.hpp>

#include "spdlog/spdlog.h"

namespace freshd::daemon {

GroupCommitter::GroupCommitter(boost::asio::io_context& io, StoreWriter* writer,
                               RecordSource records, bool archive)
    : io_(io),
      writer_(writer),
      records_(std::move(records)),
      archive_(archive) {}

bool GroupCommitter::AddWarc(fetch::FetchResult r, double started_unix,
                             FeedItem* event) {
  if (!archive_) return false;
  pending_warc_bytes_ += r.raw_body.size() + r.raw_headers.size();
  for (const fetch::RawHop& h : r.redirect_hops) {
    pending_warc_bytes_ += h.raw_body.size() + h.raw_headers.size();
  }
  r.body.clear();  // the writer needs the raw bytes only
  r.body.shrink_to_fit();
  if (event != nullptr) {
    event->warc_item = static_cast<int>(pending_warc_.size());
  }
  pending_warc_.push_back(WarcItem{std::move(r), started_unix});
  return true;
}

void GroupCommitter::AddFeed(FeedItem item) {
  pending_feed_.push_back(std::move(item));
}

void GroupCommitter::Request(std::function<void(Status)> committed) {
  if (committed) waiters_.push_back(std::move(committed));
  if (running_ || posted_) return;
  // After whatever else is queued on this thread: completions that arrived
  // together go into one batch.
  posted_ = true;
  boost::asio::post(io_, [this, alive = alive_] {
    if (!*alive) return;
    posted_ = false;
    Flush();
  });
}

bool GroupCommitter::HasWork() const {
  return records_.marked() || !pending_warc_.empty() || !waiters_.empty() ||
         !pending_feed_.empty();
}

void GroupCommitter::Flush() {
  if (running_ || !HasWork()) return;
  WriterJob job;
  uint64_t failures = 0;
  records_.take(&job.batch, &failures);
  if (failures > 0) {
    store_errors_ += failures;
    spdlog::error("store: {} records over the store's limits not written",
                  failures);
  }
  job.warc = std::move(pending_warc_);
  pending_warc_.clear();
  job.feed = std::move(pending_feed_);
  pending_feed_.clear();
  pending_warc_bytes_ = 0;
  running_ = true;
  // The writer may report after this committer is gone (Stop, then
  // destruction): the report touches only the io_context, which outlives
  // both, and `this` only behind `alive` on the owner's thread.
  job.done = [this, io = &io_, alive = alive_,
              waiters = std::move(waiters_)](Status s) mutable {
    // Writer thread: report back to the owner's thread.
    boost::asio::post(*io, [this, alive, s, waiters = std::move(waiters)]() {
      if (*alive) OnCommitted(s, std::move(waiters));
    });
  };
  waiters_.clear();
  writer_->Submit(std::move(job));
}

void GroupCommitter::OnCommitted(
    Status status, std::vector<std::function<void(Status)>> waiters) {
  running_ = false;
  if (!status.ok()) ++store_errors_;
  if (records_.committed) records_.committed(status.ok());
  for (auto& w : waiters) w(status);
  // What arrived while the writer worked goes next, as one batch.
  Flush();
  if (on_committed_) on_committed_();
}

}  // namespace freshd::daemon

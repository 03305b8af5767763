#include "daemon/parse_queue.h"

namespace freshd::daemon {

uint64_t BodyBytes(const fetch::FetchResult& r) {
  return r.body.size() + r.raw_body.size() + r.raw_headers.size();
}

ParseQueue::ParseQueue(boost::asio::io_context& io, unsigned threads)
    : applies_(io,
               [](std::vector<std::function<void()>>& batch) {
                 for (std::function<void()>& apply : batch) apply();
               }),
      pool_(threads) {}

ParseQueue::~ParseQueue() { Stop(); }

void ParseQueue::Start(std::shared_ptr<fetch::DeferredBodyDecoder> job,
                       uint64_t bytes, Work work) {
  counts_->bytes += bytes;
  ++counts_->jobs;
  boost::asio::post(pool_,
                    [this, job = std::move(job), bytes,
                     work = std::make_shared<Work>(std::move(work))]() mutable {
                      Step(std::move(job), bytes, std::move(work));
                    });
}

void ParseQueue::Step(std::shared_ptr<fetch::DeferredBodyDecoder> job,
                      uint64_t bytes, std::shared_ptr<Work> work) {
  if (!job->Step(fetch::kDecodeSliceBytes)) {
    // The rest after whatever else the pool has queued.
    boost::asio::post(pool_, [this, job = std::move(job), bytes,
                              work = std::move(work)]() mutable {
      Step(std::move(job), bytes, std::move(work));
    });
    return;
  }
  std::function<void()> apply = (*work)(job->result());
  counts_->bytes -= bytes;
  --counts_->jobs;
  // Dropped once Stop has run (the queue's contract).
  (void)applies_.Push(std::move(apply));
}

void ParseQueue::Join() { pool_.join(); }

void ParseQueue::Stop() {
  applies_.Stop();
  if (stopped_) return;
  stopped_ = true;
  pool_.stop();
  pool_.join();
}

}  // namespace freshd::daemon

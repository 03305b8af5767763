#include "daemon/parse_queue.h"

namespace freshd::daemon {

uint64_t BodyBytes(const fetch::FetchResult& r) {
  return r.body.size() + r.raw_body.size() + r.raw_headers.size();
}

ParseQueue::ParseQueue(boost::asio::io_context& io, unsigned threads)
    : io_(io), pool_(threads) {}

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
  // io_ outlives the owner, whose Stop joins the pool; an apply queued
  // after it sees !alive.
  boost::asio::post(io_, [counts = counts_, apply = std::move(apply)] {
    if (counts->alive.load()) apply();
  });
}

void ParseQueue::Join() { pool_.join(); }

void ParseQueue::Stop() {
  counts_->alive = false;
  if (stopped_) return;
  stopped_ = true;
  pool_.stop();
  pool_.join();
}

}  // namespace freshd::daemon

#include "daemon/parse_queue.h"

#include <ctime>

namespace freshd::daemon {
namespace {

// This thread's CPU time (seconds).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

uint64_t BodyBytes(const fetch::FetchResult& r) {
  return r.body.size() + r.raw_body.size() + r.raw_headers.size();
}

ParseQueue::ParseQueue(boost::asio::io_context& io, unsigned threads,
                       CostSink cost)
    : cost_(std::move(cost)),
      applies_(io,
               [](std::vector<std::function<void()>>& batch) {
                 for (std::function<void()>& apply : batch) apply();
               }),
      pool_(threads) {}

ParseQueue::~ParseQueue() { Stop(); }

void ParseQueue::Start(std::shared_ptr<Job> job, Work work) {
  job->work = std::move(work);
  counts_->bytes += job->bytes;
  ++counts_->jobs;
  boost::asio::post(
      pool_, [this, job = std::move(job)]() mutable { Step(std::move(job)); });
}

void ParseQueue::Step(std::shared_ptr<Job> job) {
  const double started = ThreadCpuSeconds();
  if (!job->decoder->Step(fetch::kDecodeSliceBytes)) {
    job->cpu_s += ThreadCpuSeconds() - started;
    // The rest after whatever else the pool has queued.
    boost::asio::post(pool_, [this, job = std::move(job)]() mutable {
      Step(std::move(job));
    });
    return;
  }
  std::function<void()> apply = job->work(job->decoder->result());
  job->cpu_s += ThreadCpuSeconds() - started;
  counts_->bytes -= job->bytes;
  --counts_->jobs;
  if (cost_) {
    apply = [this, apply = std::move(apply), url = std::move(job->url),
             cpu_s = job->cpu_s] {
      cost_(url, cpu_s);
      apply();
    };
  }
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

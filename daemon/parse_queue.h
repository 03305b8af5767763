// ParseQueue: the parse pool ([engine] parse_threads) and the one job type
// every fetched body goes through — a page, a sitemap, a site feed alike.
// A job (Submit) undoes the body's Content-Encoding on the pool a slice per
// pool turn (fetch::kDecodeSliceBytes of output: a gzip bomb's slices take
// turns with the other jobs and it ends too-large at `max_decoded`), runs
// `parse` on the pool, then hands `apply` with the result to the owner's
// io_context through one HandoffQueue (daemon/handoff_queue.h): the applies
// of the jobs parsed while the owner's thread was busy run there as one
// batch, in the order their parses ended, for one wake-up of that thread.
// Its bytes and the job are counted from Submit until the parse ends
// (/status "parse_queue" and "parse_queue_bytes": bytes(), jobs()).
// Cost: the pool thread's CPU time a job takes (its decoding slices and
// its parse, CLOCK_THREAD_CPUTIME_ID) travels with the job and is handed,
// with the URL the body was fetched from, to the `cost` sink given at
// construction, on io's thread just before the job's `apply` — so whoever
// meters it (FairShare's ParseCost) is read and written on that one
// thread, and no state is shared with the pool.
// Liveness: once Stop() has run (the owner's destructor), no `apply` runs,
// even one already queued for the io_context.
// Threads: Submit from any thread (the network thread); `parse` on a pool
// thread; `apply` and `cost` on the thread running `io`; bytes()/jobs()
// any thread;
// Stop/Join from the owner's thread.

#ifndef FRESHD_DAEMON_PARSE_QUEUE_H_
#define FRESHD_DAEMON_PARSE_QUEUE_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "daemon/handoff_queue.h"
#include "fetch/deferred_body.h"
#include "fetch/outcome.h"

namespace freshd::daemon {

// The bytes a fetched body holds while it waits for a parse (decoded or
// not, plus the raw exchange kept for WARC).
uint64_t BodyBytes(const fetch::FetchResult& r);

class ParseQueue {
 public:
  // A job's pool CPU seconds, with the URL its body was fetched from
  // (FetchResult::url as submitted); on io's thread.
  using CostSink = std::function<void(std::string_view url, double cpu_s)>;

  // `cost` null: not metered.
  ParseQueue(boost::asio::io_context& io, unsigned threads,
             CostSink cost = nullptr);
  ~ParseQueue();  // Stop()
  ParseQueue(const ParseQueue&) = delete;
  ParseQueue& operator=(const ParseQueue&) = delete;

  // Decodes `r` (≤ max_decoded bytes), runs parse(r) → R on the pool, then
  // apply(std::move(r), std::move(R)) on io's thread. `parse` sees r still
  // not-ok (too-large, bad-encoding) when the decoding failed.
  template <class Parse, class Apply>
  void Submit(fetch::FetchResult r, uint64_t max_decoded, Parse parse,
              Apply apply) {
    const uint64_t bytes = BodyBytes(r);  // as fetched: still encoded
    auto job = std::make_shared<Job>(r.url, bytes);
    job->decoder.emplace(std::move(r), max_decoded);
    Start(std::move(job), [parse = std::move(parse), apply = std::move(apply)](
                              fetch::FetchResult& body) mutable {
      // One allocation holds the body and the parse (shared, so a
      // move-only result fits a std::function).
      struct Parsed {
        fetch::FetchResult body;
        std::optional<decltype(parse(body))> result;
      };
      auto done = std::make_shared<Parsed>();
      done->result.emplace(parse(body));
      done->body = std::move(body);
      return std::function<void()>([apply = std::move(apply), done]() mutable {
        apply(std::move(done->body), std::move(*done->result));
      });
    });
  }

  uint64_t bytes() const { return counts_->bytes.load(); }
  uint64_t jobs() const { return counts_->jobs.load(); }
  // Batches of applies handed to the owner's thread (its wake-ups).
  uint64_t apply_batches() const { return applies_.posts(); }

  // Waits for the jobs queued to end (their `apply` still posted).
  void Join();
  // Queued jobs are dropped, a running one finishes; no `apply` runs after.
  void Stop();

 private:
  struct Counts {
    std::atomic<uint64_t> bytes{0};
    std::atomic<uint64_t> jobs{0};
  };
  // On the pool: the decoded body -> what to run on io's thread.
  using Work = std::function<std::function<void()>(fetch::FetchResult&)>;
  // One job, on one pool thread at a time (the hand-offs are posts).
  struct Job {
    Job(std::string u, uint64_t b) : url(std::move(u)), bytes(b) {}
    std::string url;
    uint64_t bytes;
    std::optional<fetch::DeferredBodyDecoder> decoder;
    Work work;
    double cpu_s = 0;  // the pool's CPU time on it so far
  };
  void Start(std::shared_ptr<Job> job, Work work);
  void Step(std::shared_ptr<Job> job);

  const CostSink cost_;
  std::shared_ptr<Counts> counts_ = std::make_shared<Counts>();
  // Parsed jobs' applies, to the owner's thread in batches.
  HandoffQueue<std::function<void()>> applies_;
  boost::asio::thread_pool pool_;
  bool stopped_ = false;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PARSE_QUEUE_H_

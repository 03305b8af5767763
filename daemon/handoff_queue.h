// HandoffQueue<T>: hands items from any thread to the one thread running an
// io_context, in batches (daemon/README.md "hand-offs"). Push appends under
// a mutex and posts one drain only when the queue goes from empty to
// non-empty, so a burst of items costs the consumer's thread one wake-up;
// the drain swaps the items out (the previous batch's buffer is reused) and
// calls `consume` once with the batch, in push order, on io's thread.
// Shutdown: after Stop() no `consume` runs, even for a drain already
// posted, and Push drops its item (returns false); items queued and never
// consumed are destroyed with the queue or at the drain that finds it
// stopped. The io_context may outlive the queue (a drain posted finds the
// shared state, not the queue).
// Not bounded here: each queue's producer is bounded where the work starts
// (fetch requests and their hand-backs by what may be in flight: the
// dispatcher's slots for pages, their own caps for sitemap, feed and key
// file fetches; parsed results by the parse queue's job and byte limits),
// so a queue holds at most what those limits let through.
// Threads: Push, PushAll and posts() from any thread; `consume` on io's
// thread; Stop from the consumer's thread (io's, or with io not running).
// A producer with an io_context of its own batches its side too
// (TurnBatch below).

#ifndef FRESHD_DAEMON_HANDOFF_QUEUE_H_
#define FRESHD_DAEMON_HANDOFF_QUEUE_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace freshd::daemon {

template <class T>
class HandoffQueue {
 public:
  // Runs on io's thread with one batch (non-empty, push order); it may
  // move the items out but must leave the vector to the queue.
  using Consume = std::function<void(std::vector<T>& batch)>;

  HandoffQueue(boost::asio::io_context& io, Consume consume)
      : state_(std::make_shared<State>(io, std::move(consume))) {}
  ~HandoffQueue() { Stop(); }
  HandoffQueue(const HandoffQueue&) = delete;
  HandoffQueue& operator=(const HandoffQueue&) = delete;

  // Queues `item`; false (dropped) once stopped.
  bool Push(T item) {
    State& s = *state_;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (!s.alive) return false;
      s.items.push_back(std::move(item));
      if (s.items.size() > 1) return true;  // a drain is already posted
    }
    PostDrain();
    return true;
  }
  // Queues all of `items` (moved out; the vector is left empty, its
  // buffer kept) under one lock and at most one post; false once stopped.
  bool PushAll(std::vector<T>& items) {
    if (items.empty()) return true;
    State& s = *state_;
    bool was_empty = false;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (!s.alive) {
        items.clear();
        return false;
      }
      was_empty = s.items.empty();
      if (was_empty) {
        s.items.swap(items);  // no copy; `items` gets the empty buffer
      } else {
        for (T& item : items) s.items.push_back(std::move(item));
      }
    }
    items.clear();
    if (was_empty) PostDrain();
    return true;
  }

  // No consume from now on; queued items are dropped.
  void Stop() {
    std::vector<T> dropped;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->alive = false;
      dropped.swap(state_->items);
    }
  }

  // Drains posted so far (the consumer's wake-ups); any thread.
  uint64_t posts() const {
    return state_->posts.load(std::memory_order_relaxed);
  }

 private:
  struct State {
    State(boost::asio::io_context& io_context, Consume fn)
        : io(io_context), consume(std::move(fn)) {}
    boost::asio::io_context& io;
    const Consume consume;
    std::mutex mu;
    std::vector<T> items;  // guarded by mu
    std::vector<T> spare;  // guarded by mu: the last batch's buffer
    bool alive = true;     // guarded by mu
    std::atomic<uint64_t> posts{0};
  };

  void PostDrain() {
    state_->posts.fetch_add(1, std::memory_order_relaxed);
    boost::asio::post(state_->io, [state = state_] { Drain(*state); });
  }

  static void Drain(State& s) {
    std::vector<T> batch;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (!s.alive || s.items.empty()) return;
      batch.swap(s.spare);
      batch.swap(s.items);  // items now holds the spare (empty) buffer
    }
    s.consume(batch);
    batch.clear();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.spare.capacity() < batch.capacity()) s.spare.swap(batch);
  }

  std::shared_ptr<State> state_;
};

// TurnBatch<T>: the producer's side of a hand-off, for a producer that
// runs on an io_context of its own. The items Add()ed during one turn of
// that thread (the handlers ready now: a dispatch pass selecting many
// pages, one libcurl event completing several transfers) go to `flush`
// together, from one call posted to the producer's own thread after them:
// handed on with HandoffQueue::PushAll, one lock and one wake-up of the
// consumer for the lot, where handing each at once would wake an idle
// consumer once per item. Order is kept. `flush` gets the items in a
// vector whose buffer is reused (it leaves it empty or the batch clears
// it). Items not flushed when the batch is destroyed are dropped.
// Thread: the producer's (the one running `producer`); not thread-safe.
template <class T>
class TurnBatch {
 public:
  using Flush = std::function<void(std::vector<T>& items)>;

  TurnBatch(boost::asio::io_context& producer, Flush flush)
      : producer_(producer), flush_(std::move(flush)) {}
  // Into `queue`, which must outlive the batch.
  TurnBatch(boost::asio::io_context& producer, HandoffQueue<T>* queue)
      : TurnBatch(producer, [queue](std::vector<T>& items) {
          (void)queue->PushAll(items);
        }) {}
  ~TurnBatch() { *alive_ = false; }
  TurnBatch(const TurnBatch&) = delete;
  TurnBatch& operator=(const TurnBatch&) = delete;

  void Add(T item) {
    items_.push_back(std::move(item));
    if (items_.size() > 1) return;  // a flush is already posted
    ++flushes_;
    boost::asio::post(producer_, [this, alive = alive_] {
      if (*alive) FlushNow();
    });
  }
  // Hands what was added on now.
  void FlushNow() {
    if (items_.empty()) return;
    flush_(items_);
    items_.clear();
  }
  // Flushes posted so far.
  uint64_t flushes() const { return flushes_; }

 private:
  boost::asio::io_context& producer_;
  const Flush flush_;
  std::vector<T> items_;  // added since the last flush (buffer reused)
  uint64_t flushes_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_HANDOFF_QUEUE_H_

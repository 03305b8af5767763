// HandoffQueue and TurnBatch alone: items from other threads reach the
// io_context's thread in batches, in order, one post per batch; what a
// producer adds in one turn of its own thread is one hand-off; Stop drops.

#include "daemon/handoff_queue.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace freshd::daemon {
namespace {

TEST(HandoffQueueTest, ABurstIsOneBatchInPushOrderAndOnePost) {
  boost::asio::io_context io;
  std::vector<std::vector<int>> batches;
  std::thread::id consumer;
  HandoffQueue<int> queue(io, [&](std::vector<int>& batch) {
    consumer = std::this_thread::get_id();
    batches.push_back(batch);
  });
  // Pushed from another thread while the consumer's thread is busy (io not
  // running yet): one drain is posted for all of them.
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(queue.Push(i));
  });
  producer.join();
  EXPECT_EQ(queue.posts(), 1u);
  io.run();
  ASSERT_EQ(batches.size(), 1u);
  ASSERT_EQ(batches[0].size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(batches[0][i], i);
  EXPECT_EQ(consumer, std::this_thread::get_id());

  // The queue went empty: the next push posts again, and its batch holds
  // only the new items.
  io.restart();
  ASSERT_TRUE(queue.Push(7));
  ASSERT_TRUE(queue.Push(8));
  EXPECT_EQ(queue.posts(), 2u);
  io.run();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1], (std::vector<int>{7, 8}));
}

TEST(HandoffQueueTest, ConcurrentProducersKeepEachOnesOrder) {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread consumer([&] { io.run(); });
  std::vector<int> seen;  // consumer's thread only
  std::atomic<size_t> count{0};
  constexpr int kPerProducer = 20000;
  HandoffQueue<int> queue(io, [&](std::vector<int>& batch) {
    seen.insert(seen.end(), batch.begin(), batch.end());
    count += batch.size();
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p) {
    producers.emplace_back([&queue, p] {
      for (int i = 0; i < kPerProducer; ++i) (void)queue.Push(p * 1000000 + i);
    });
  }
  for (auto& t : producers) t.join();
  while (count.load() < 2u * kPerProducer) std::this_thread::yield();
  guard.reset();
  consumer.join();
  ASSERT_EQ(seen.size(), 2u * kPerProducer);
  int next[2] = {0, 0};
  for (int v : seen) {
    const int p = v / 1000000;
    EXPECT_EQ(v % 1000000, next[p]) << "producer " << p;
    next[p] = v % 1000000 + 1;
  }
  // Never more posts than items, and each post drained at least one item.
  EXPECT_LE(queue.posts(), 2u * kPerProducer);
  EXPECT_GE(queue.posts(), 1u);
}

TEST(HandoffQueueTest, NoConsumeAfterStopAndPushesAreDropped) {
  boost::asio::io_context io;
  int consumed = 0;
  auto item = std::make_shared<int>(1);
  std::weak_ptr<int> watch = item;
  {
    HandoffQueue<std::shared_ptr<int>> queue(
        io, [&](std::vector<std::shared_ptr<int>>& batch) {
          consumed += static_cast<int>(batch.size());
        });
    ASSERT_TRUE(queue.Push(std::move(item)));  // a drain is posted
    queue.Stop();
    EXPECT_TRUE(watch.expired());  // the queued item is dropped at Stop
    EXPECT_FALSE(queue.Push(std::make_shared<int>(2)));
  }
  io.run();  // the drain posted before Stop runs after the queue is gone
  EXPECT_EQ(consumed, 0);
}

TEST(HandoffQueueTest, TheDestructorStopsTheQueue) {
  boost::asio::io_context io;
  int consumed = 0;
  {
    HandoffQueue<int> queue(io, [&](std::vector<int>& batch) {
      consumed += static_cast<int>(batch.size());
    });
    ASSERT_TRUE(queue.Push(1));
  }
  io.run();
  EXPECT_EQ(consumed, 0);
}

TEST(HandoffQueueTest, PushAllIsOnePostAndKeepsOrderBehindQueuedItems) {
  boost::asio::io_context io;
  std::vector<std::vector<int>> batches;
  HandoffQueue<int> queue(
      io, [&](std::vector<int>& batch) { batches.push_back(batch); });
  std::vector<int> items = {1, 2, 3};
  ASSERT_TRUE(queue.PushAll(items));
  EXPECT_TRUE(items.empty());
  ASSERT_TRUE(queue.Push(4));
  items = {5, 6};
  ASSERT_TRUE(queue.PushAll(items));
  EXPECT_EQ(queue.posts(), 1u);
  io.run();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], (std::vector<int>{1, 2, 3, 4, 5, 6}));
  queue.Stop();
  items = {7};
  EXPECT_FALSE(queue.PushAll(items));
  EXPECT_TRUE(items.empty());  // dropped
}

TEST(TurnBatchTest, WhatOneTurnAddsIsOneHandOffInOrder) {
  boost::asio::io_context producer, consumer;
  std::vector<std::vector<int>> batches;
  HandoffQueue<int> queue(
      consumer, [&](std::vector<int>& batch) { batches.push_back(batch); });
  TurnBatch<int> batch(producer, &queue);
  // One turn of the producer's thread adds 100 items (a dispatch pass).
  boost::asio::post(producer, [&] {
    for (int i = 0; i < 100; ++i) batch.Add(i);
    EXPECT_EQ(queue.posts(), 0u);  // nothing handed on inside the turn
  });
  producer.run();
  EXPECT_EQ(batch.flushes(), 1u);
  EXPECT_EQ(queue.posts(), 1u);
  consumer.run();
  ASSERT_EQ(batches.size(), 1u);
  ASSERT_EQ(batches[0].size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(batches[0][i], i);

  // The next turn is a hand-off of its own.
  producer.restart();
  consumer.restart();
  boost::asio::post(producer, [&] {
    batch.Add(100);
    batch.Add(101);
  });
  producer.run();
  consumer.run();
  EXPECT_EQ(batch.flushes(), 2u);
  EXPECT_EQ(queue.posts(), 2u);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[1], (std::vector<int>{100, 101}));
}

TEST(TurnBatchTest, ItemsNotFlushedWhenTheBatchGoesAreDropped) {
  boost::asio::io_context producer;
  int flushed = 0;
  {
    TurnBatch<int> batch(producer, [&](std::vector<int>& items) {
      flushed += static_cast<int>(items.size());
    });
    batch.Add(1);  // its flush is posted
  }
  producer.run();  // and finds the batch gone
  EXPECT_EQ(flushed, 0);
}

}  // namespace
}  // namespace freshd::daemon

// The cluster's change stream with a real nats-server: two nodes'
// publishers, one reader (the component and `freshd changes --nats`).
// Events of both nodes are read back by one consumer, each node's in its
// order, none twice — also after a publish whose acknowledgement was lost
// (the server stopped with SIGSTOP), after the server stopped and started
// again with windows in flight (order and exactly once kept), and after a
// publisher restarted with its events queued again; --since resumes from a
// stream sequence or a time; the publish queue is bounded while NATS is down.
// Every wait is for a condition, bounded generously (no wall-clock deadline
// that ASan on a loaded machine could miss).

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "cluster/change_publisher.h"
#include "cluster/change_reader.h"
#include "nlohmann/json.hpp"
#include "tests/cli/run_command.h"
#include "tests/cluster/nats_server.h"

namespace freshd::cluster {
namespace {

std::string EventJson(const std::string& node, uint64_t seq) {
  return nlohmann::json{
      {"node", node},
      {"seq", seq},
      {"url", "http://" + node + ".test/p/" + std::to_string(seq)},
      {"kind", "changed"}}
      .dump();
}

std::unique_ptr<ChangePublisher> StartPublisher(const std::string& url,
                                                const std::string& node,
                                                uint64_t local_newest = 0) {
  ChangePublisherOptions o;
  o.nats_url = url;
  o.node = node;
  o.local_newest = local_newest;
  auto p = ChangePublisher::Create(o);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return nullptr;
  (*p)->Start();
  return std::move(p).value();
}

// Polls `done` every 20 ms, at most `bound_s` (a failure bound, far above
// what the condition needs).
template <typename Fn>
bool WaitFor(Fn done, double bound_s = 120) {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(static_cast<int>(bound_s * 1e3));
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The stream holds every event up to `last` and nothing is queued. (Not
// `published == N`: a window whose acknowledgements came after the ack wait
// on a loaded machine is sent again and counted skipped.)
bool AllStored(const ChangePublisher& p, uint64_t last) {
  const ChangePublisherStats s = p.stats();
  return s.queued == 0 && s.last_seq == last;
}

// Every message after `after`, read in batches of `batch`.
std::vector<ChangeMessage> ReadAll(const std::string& url, uint64_t after = 0,
                                   size_t batch = 64) {
  ChangeReaderOptions o;
  o.nats_url = url;
  o.after = after;
  o.batch = batch;
  auto reader = ChangeReader::Open(o);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<ChangeMessage> out;
  if (!reader.ok()) return out;
  for (;;) {
    auto b = (*reader)->Next(0);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok()) break;
    EXPECT_LE(b->messages.size(), batch);
    for (auto& m : b->messages) out.push_back(std::move(m));
    if (!b->more) break;
  }
  return out;
}

// Each node's seqs in the order read; stream sequences rising.
std::map<std::string, std::vector<uint64_t>> SeqsByNode(
    const std::vector<ChangeMessage>& messages) {
  std::map<std::string, std::vector<uint64_t>> seqs;
  uint64_t last_stream_seq = 0;
  for (const auto& m : messages) {
    EXPECT_GT(m.stream_seq, last_stream_seq);
    last_stream_seq = m.stream_seq;
    nlohmann::json j = nlohmann::json::parse(m.data);
    EXPECT_EQ(j["node"], m.node);
    seqs[m.node].push_back(j["seq"].get<uint64_t>());
  }
  return seqs;
}

std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> v;
  for (uint64_t s = from; s <= to; ++s) v.push_back(s);
  return v;
}

class ChangeStreamTest : public testing::NatsServerTest {
 protected:
  ChangeStreamTest() : NatsServerTest("change_stream") {}
};

TEST_F(ChangeStreamTest, TwoNodesEventsReadBackByOneConsumerInOrder) {
  auto a = StartPublisher(nats_->url(), "node-a");
  auto b = StartPublisher(nats_->url(), "node-b");
  ASSERT_TRUE(a && b);
  for (uint64_t seq = 1; seq <= 300; ++seq) {
    a->Publish(seq, EventJson("node-a", seq));
    if (seq <= 200) b->Publish(seq, EventJson("node-b", seq));
  }
  ASSERT_TRUE(WaitFor([&] { return AllStored(*a, 300) && AllStored(*b, 200); }))
      << a->stats().last_seq << " " << b->stats().last_seq;
  // Each event stored once: published, or (a window whose acknowledgements
  // came after the 5 s wait on a loaded machine, sent again) skipped.
  EXPECT_EQ(a->stats().published + a->stats().skipped, 300u);
  EXPECT_EQ(a->stats().dropped, 0u);
  if (a->stats().failures == 0) {
    EXPECT_EQ(a->stats().skipped, 0u);
  }

  const std::vector<ChangeMessage> all = ReadAll(nats_->url());
  ASSERT_EQ(all.size(), 500u);
  auto seqs = SeqsByNode(all);
  EXPECT_EQ(seqs["node-a"], Range(1, 300));
  EXPECT_EQ(seqs["node-b"], Range(1, 200));

  // Resuming after stream sequence 123 gives exactly the rest.
  const std::vector<ChangeMessage> rest = ReadAll(nats_->url(), 123, 1000);
  ASSERT_EQ(rest.size(), 500u - 123);
  EXPECT_EQ(rest.front().stream_seq, 124u);
  EXPECT_EQ(rest.front().data, all[123].data);

  // A cursor past the stream's newest is refused.
  ChangeReaderOptions o;
  o.nats_url = nats_->url();
  o.after = 501;
  EXPECT_EQ(ChangeReader::Open(o).status().code(),
            Status::Code::kInvalidArgument);
}

TEST_F(ChangeStreamTest, NoDuplicatesAfterALostAckOrARestart) {
  auto a = StartPublisher(nats_->url(), "a");
  ASSERT_TRUE(a);
  for (uint64_t seq = 1; seq <= 20; ++seq) a->Publish(seq, EventJson("a", seq));
  ASSERT_TRUE(WaitFor([&] { return AllStored(*a, 20); }));

  // The server stops answering: the next publish reaches its socket but
  // its acknowledgement comes too late, so the publisher retries it after
  // the server is back (which stored it meanwhile).
  ASSERT_EQ(kill(nats_->pid(), SIGSTOP), 0);
  for (uint64_t seq = 21; seq <= 30; ++seq) {
    a->Publish(seq, EventJson("a", seq));
  }
  const bool failed = WaitFor([&] { return a->stats().failures > 0; });
  ASSERT_EQ(kill(nats_->pid(), SIGCONT), 0);
  ASSERT_TRUE(failed);
  ASSERT_TRUE(WaitFor([&] { return AllStored(*a, 30); }));
  // The events in flight (21, and any of 22..30 sent in its window)
  // reached the stream when the server resumed: not stored again.
  EXPECT_GE(a->stats().skipped, 1u);
  EXPECT_EQ(a->stats().skipped + a->stats().published, 30u);

  // A restart that queues 1..40 again (its local feed's newest is 30):
  // 1..30 are in the stream already and skipped.
  a->Stop();
  a = StartPublisher(nats_->url(), "a", 30);
  ASSERT_TRUE(a);
  for (uint64_t seq = 1; seq <= 40; ++seq) a->Publish(seq, EventJson("a", seq));
  ASSERT_TRUE(WaitFor([&] { return AllStored(*a, 40); }));
  EXPECT_EQ(a->stats().skipped + a->stats().published, 40u);
  if (a->stats().failures == 0) {
    EXPECT_EQ(a->stats().published, 10u);
  }

  auto seqs = SeqsByNode(ReadAll(nats_->url()));
  EXPECT_EQ(seqs["a"], Range(1, 40));
}

// The server stops (SIGTERM) while windows are in flight and starts again
// on the same port and store: what it had received on the lost connection
// is a prefix, nothing the publisher sent then is replayed on the next
// connection ahead of what was lost, and the resend from the first
// unacknowledged event (same Msg-Ids) fills the gap. The stream ends with
// every event once, in seq order.
TEST_F(ChangeStreamTest, ServerRestartMidWindowKeepsOrderAndExactlyOnce) {
  auto a = StartPublisher(nats_->url(), "a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(WaitFor([&] { return a->stats().connected; }));
  constexpr uint64_t kEvents = 20000;
  const std::string pad(300, 'x');
  for (uint64_t seq = 1; seq <= kEvents; ++seq) {
    nlohmann::json j = nlohmann::json::parse(EventJson("a", seq));
    j["pad"] = pad;
    a->Publish(seq, j.dump());
  }
  // Stopped part-way, with windows in flight.
  ASSERT_TRUE(WaitFor([&] { return a->stats().published >= 2000; }, 600));
  const uint64_t stored_before_stop = a->stats().last_seq;
  nats_->Stop(SIGTERM);
  ASSERT_TRUE(nats_->Start()) << nats_->error();
  ASSERT_TRUE(WaitFor([&] { return AllStored(*a, kEvents); }, 600))
      << a->stats().last_seq;
  const ChangePublisherStats s = a->stats();
  // The restart happened part-way. (Whether a window was in flight when
  // the server went, and so s.failures > 0, is the machine's timing: under
  // ASan the publisher has been seen between windows.)
  EXPECT_LT(stored_before_stop, kEvents);
  EXPECT_EQ(s.published + s.skipped, kEvents);
  EXPECT_EQ(s.reordered, 0u);
  EXPECT_EQ(s.dropped + s.lost, 0u);

  auto seqs = SeqsByNode(ReadAll(nats_->url(), 0, 4096));
  EXPECT_EQ(seqs["a"], Range(1, kEvents));
}

TEST_F(ChangeStreamTest, FreshdChangesNatsPrintsTheClusterFeedAndResumes) {
  auto a = StartPublisher(nats_->url(), "a");
  auto b = StartPublisher(nats_->url(), "b");
  ASSERT_TRUE(a && b);
  const double before = UnixNow();
  for (uint64_t seq = 1; seq <= 5; ++seq) {
    a->Publish(seq, EventJson("a", seq));
    b->Publish(seq, EventJson("b", seq));
  }
  ASSERT_TRUE(WaitFor([&] { return AllStored(*a, 5) && AllStored(*b, 5); }));

  auto run = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"changes", "--nats", nats_->url(),
                                     "--limit", "4"};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::RunFreshd(args);
  };
  // Events and cursor lines, like the local feed, with node and stream_seq.
  auto parse = [](const std::string& out, std::vector<nlohmann::json>* events,
                  std::vector<nlohmann::json>* cursors) {
    std::stringstream lines(out);
    for (std::string l; std::getline(lines, l);) {
      nlohmann::json j = nlohmann::json::parse(l);
      (j.contains("next_cursor") ? cursors : events)->push_back(j);
    }
  };
  testing::CommandResult r = run({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> events, cursors;
  parse(r.out, &events, &cursors);
  ASSERT_EQ(events.size(), 10u) << r.out;
  ASSERT_EQ(cursors.size(), 3u) << r.out;  // batches of 4, 4, 2
  EXPECT_EQ(cursors.back()["next_cursor"], 10);
  EXPECT_EQ(cursors.back()["more"], false);
  EXPECT_EQ(cursors.front()["more"], true);
  std::map<std::string, int> per_node;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i]["stream_seq"], i + 1);
    EXPECT_EQ(events[i]["seq"], ++per_node[events[i]["node"]]);
  }
  EXPECT_EQ(per_node["a"], 5);
  EXPECT_EQ(per_node["b"], 5);

  // --since a stream sequence resumes after it.
  r = run({"--since", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  events.clear();
  cursors.clear();
  parse(r.out, &events, &cursors);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events.front()["stream_seq"], 8);

  // --since a time: from the first event stored then.
  r = run({"--since", "1970-01-02T00:00:00Z"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  events.clear();
  parse(r.out, &events, &cursors);
  EXPECT_EQ(events.size(), 10u);
  // An hour ahead: nothing yet.
  const time_t ahead = static_cast<time_t>(before) + 3600;
  char later[32];
  std::strftime(later, sizeof later, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&ahead));
  r = run({"--since", later});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  events.clear();
  parse(r.out, &events, &cursors);
  EXPECT_EQ(events.size(), 0u) << r.out;

  // Bad input and an unreachable server are clear errors.
  r = run({"--since", "yesterday"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--since"), std::string::npos) << r.err;
  r = run({"--since", "99"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("past the stream's newest"), std::string::npos) << r.err;
  r = testing::RunFreshd({"changes", "--nats", "nats://127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot reach NATS"), std::string::npos) << r.err;
}

TEST_F(ChangeStreamTest, EventsNotQueuedAreReadBackFromTheLocalFeed) {
  // The node's local feed: events 31..120 (1..30 went by retention).
  ChangeBackfillFn feed = [](uint64_t after, uint64_t before, size_t limit,
                             std::vector<ChangeEvent>* out) {
    for (uint64_t seq = std::max<uint64_t>(after + 1, 31);
         seq < before && seq <= 120 && out->size() < limit; ++seq) {
      out->push_back({seq, EventJson("a", seq)});
    }
    return Status::OK();
  };
  ChangePublisherOptions o;
  o.nats_url = nats_->url();
  o.node = "a";
  o.queue_items = 10;
  o.backfill = feed;
  auto p = ChangePublisher::Create(o);
  ASSERT_TRUE(p.ok());
  // Queued before the publisher runs: 1..90 are pushed out of the queue.
  for (uint64_t seq = 1; seq <= 100; ++seq) {
    (*p)->Publish(seq, EventJson("a", seq));
  }
  EXPECT_EQ((*p)->stats().dropped, 90u);
  (*p)->Start();
  ASSERT_TRUE(WaitFor([&] { return AllStored(**p, 100); }));
  ChangePublisherStats s = (*p)->stats();
  EXPECT_EQ(s.lost, 30u);  // 1..30
  EXPECT_EQ(s.published + s.skipped, 70u);
  if (s.failures == 0) {  // else some were found stored when sent again
    EXPECT_EQ(s.backfilled, 60u);  // 31..90
    EXPECT_EQ(s.published, 70u);
  }
  (*p)->Stop();

  // Restarted after a crash: 101..120 were committed, never published, and
  // nothing is queued; they come from the local feed.
  o.local_newest = 120;
  auto q = ChangePublisher::Create(o);
  ASSERT_TRUE(q.ok());
  (*q)->Start();
  ASSERT_TRUE(WaitFor([&] { return AllStored(**q, 120); }));
  if ((*q)->stats().failures == 0) {
    EXPECT_EQ((*q)->stats().backfilled, 20u);
  }
  EXPECT_EQ((*q)->stats().lost, 0u);
  auto seqs = SeqsByNode(ReadAll(nats_->url()));
  EXPECT_EQ(seqs["a"], Range(31, 120));
}

TEST(ChangePublisherTest, TheQueueIsBoundedWhileNatsIsDown) {
  ChangePublisherOptions o;
  o.nats_url = "nats://127.0.0.1:1";  // refused: NATS is down
  o.node = "a";
  o.queue_items = 100;
  auto p = ChangePublisher::Create(o);
  ASSERT_TRUE(p.ok());
  (*p)->Start();
  for (uint64_t seq = 1; seq <= 150; ++seq) {
    (*p)->Publish(seq, EventJson("a", seq));
  }
  ChangePublisherStats s = (*p)->stats();
  EXPECT_EQ(s.queued, 100u);
  EXPECT_EQ(s.dropped, 50u);
  EXPECT_EQ(s.published, 0u);
  // Bounded in bytes too, and an oversized event is refused.
  o.queue_items = kChangeQueueItems;
  o.queue_bytes = 10000;
  auto q = ChangePublisher::Create(o);
  ASSERT_TRUE(q.ok());
  for (uint64_t seq = 1; seq <= 100; ++seq) {
    (*q)->Publish(seq, std::string(1000, 'x'));
  }
  (*q)->Publish(101, std::string(kMaxChangeBytes + 1, 'x'));
  s = (*q)->stats();
  EXPECT_EQ(s.queued, 10u);  // the last 9 and a stub for the oversized one
  EXPECT_EQ(s.dropped, 91u);
  EXPECT_EQ(s.bad, 1u);
  // Node names must be subject tokens.
  o.node = "a.b";
  EXPECT_FALSE(ChangePublisher::Create(o).ok());
}

}  // namespace
}  // namespace freshd::cluster

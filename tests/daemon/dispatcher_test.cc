// Dispatcher alone: a real Scheduler, queue depths and the clocks passed in
// by the test, the fetch hand-off recorded. No network, no loop.

#include "daemon/dispatcher.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace freshd::daemon {
namespace {

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sched::SchedulerOptions o;
    o.rate = 1000;  // tokens are no limit here
    o.burst = 1000;
    auto s = sched::Scheduler::Create(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    sched_ = std::move(s).value();
    // Three pages of host 0, two of host 1.
    for (sched::HostId h : {0, 0, 0, 1, 1}) {
      ASSERT_TRUE(sched_->AddUrl(h, 1.0).ok());
    }
  }

  std::unique_ptr<Dispatcher> Make(size_t connections, int per_host) {
    Dispatcher::Options o;
    o.max_connections = connections;
    o.queue_bytes = 1000;
    o.max_in_flight_per_host = per_host;
    Dispatcher::Stages st;
    st.parse_bytes = [this] { return parse_bytes_; };
    st.write_bytes = [this] { return write_bytes_; };
    st.fetching = [this] { return fetching_; };
    st.fetch = [this](sched::PageId page, double) { fetched_.push_back(page); };
    auto d =
        std::make_unique<Dispatcher>(io_, sched_.get(), o, std::move(st), kT0);
    d->Start();
    return d;
  }

  std::map<sched::HostId, int> ByHost() const {
    std::map<sched::HostId, int> n;
    for (sched::PageId p : fetched_) ++n[sched_->page(p).host];
    return n;
  }

  static constexpr double kT0 = 1.7e9;
  boost::asio::io_context io_;
  std::unique_ptr<sched::Scheduler> sched_;
  uint64_t parse_bytes_ = 0, write_bytes_ = 0, fetching_ = 0;
  std::vector<sched::PageId> fetched_;
};

TEST_F(DispatcherTest, OneSlotPerHostAndTheGateReopensIt) {
  auto d = Make(10, 1);
  d->Run(kT0, /*gate_now=*/100);
  // One page per host: the host slots are the limit.
  EXPECT_EQ(ByHost(), (std::map<sched::HostId, int>{{0, 1}, {1, 1}}));
  EXPECT_EQ(d->in_flight(), 2u);
  EXPECT_EQ(d->on_network(), 2u);
  EXPECT_EQ(d->slots().in_flight(0), 1);
  EXPECT_EQ(d->limits().last(), Limit::kPoliteness);

  // Host 0's fetch ends; its gate opens again at 105 (the fetcher's clock).
  const sched::PageId first = fetched_[0];
  const sched::HostId host = sched_->page(first).host;
  d->NetworkDone(first, 105);
  EXPECT_EQ(d->on_network(), 1u);
  EXPECT_EQ(d->in_flight(), 2u);  // still being parsed
  EXPECT_EQ(d->slots().in_flight(host), 0);
  const size_t before = fetched_.size();
  d->Run(kT0 + 1, 101);
  EXPECT_EQ(fetched_.size(), before);  // the gate is closed until 105
  // The wake-up is armed for the reopening, 4 s on.
  EXPECT_NEAR(d->wake_at(), std::min(kT0 + 1 + 0.25, kT0 + 1 + 4), 1e-6);
  d->Run(kT0 + 5, 105.5);
  ASSERT_EQ(fetched_.size(), before + 1);
  EXPECT_EQ(sched_->page(fetched_.back()).host, host);

  // The parse is over: the start time comes back, the entry is gone.
  EXPECT_EQ(d->Finish(first, 106), kT0);
  EXPECT_EQ(d->Finish(first, 106), 0);
  EXPECT_EQ(d->in_flight(), 2u);
  EXPECT_EQ(d->dispatched_total(), 3u);
}

TEST_F(DispatcherTest, ConnectionsAndQueuesPause) {
  auto d = Make(1, 5);
  d->Run(kT0, 100);
  EXPECT_EQ(fetched_.size(), 1u);  // one connection
  fetching_ = 1;                   // the network still has it
  d->Run(kT0 + 1, 101);
  EXPECT_EQ(d->limits().last(), Limit::kNetwork);
  // The network is done but this thread has not taken it back yet: the
  // scheduler's thread held the slot.
  fetching_ = 0;
  d->Run(kT0 + 2, 102);
  EXPECT_EQ(d->limits().last(), Limit::kScheduler);
  d->NetworkDone(fetched_[0], 0);

  parse_bytes_ = 501;  // over half of queue_bytes
  d->Run(kT0 + 3, 103);
  EXPECT_EQ(fetched_.size(), 1u);
  EXPECT_EQ(d->limits().last(), Limit::kParse);
  parse_bytes_ = 0;
  write_bytes_ = 600;
  d->Run(kT0 + 13, 113);
  EXPECT_EQ(d->limits().last(), Limit::kWrite);
  write_bytes_ = 0;
  d->Run(kT0 + 14, 114);
  EXPECT_EQ(fetched_.size(), 2u);
  // Ten seconds were the parse queue's: it led.
  EXPECT_EQ(LimitedBy(d->limits().seconds(), 0, 100), Limit::kParse);
}

TEST_F(DispatcherTest, StoppedOrOtherNodesHostsDispatchNothing) {
  Dispatcher::Options o;
  o.max_connections = 10;
  Dispatcher::Stages st;
  st.parse_bytes = [] { return uint64_t{0}; };
  st.write_bytes = [] { return uint64_t{0}; };
  st.fetching = [] { return uint64_t{0}; };
  st.owned = [](sched::HostId h) { return h == 1; };
  st.fetch = [this](sched::PageId page, double) { fetched_.push_back(page); };
  Dispatcher d(io_, sched_.get(), o, std::move(st), kT0);
  d.Run(kT0, 100);
  EXPECT_TRUE(fetched_.empty());  // not started
  d.Start();
  d.Run(kT0, 100);
  EXPECT_EQ(ByHost(), (std::map<sched::HostId, int>{{1, 1}}));
  d.Stop();
  d.NetworkDone(fetched_[0], 0);
  d.Run(kT0 + 1, 101);
  EXPECT_EQ(fetched_.size(), 1u);
}

TEST(LimitMeterTest, DecaysWithAHalfLifeOfTenSeconds) {
  LimitMeter m(0);
  m.Note(Limit::kParse, 0);
  m.Note(Limit::kWrite, 10);  // 10 s of parse
  m.Note(Limit::kNone, 20);   // 10 s of write; parse halved
  EXPECT_NEAR(m.seconds()[static_cast<int>(Limit::kParse)], 5, 1e-9);
  EXPECT_NEAR(m.seconds()[static_cast<int>(Limit::kWrite)], 10, 1e-9);
  EXPECT_EQ(LimitedBy(m.seconds(), 0, 0), Limit::kWrite);
  EXPECT_STREQ(LimitName(Limit::kWrite), "write");
}

}  // namespace
}  // namespace freshd::daemon

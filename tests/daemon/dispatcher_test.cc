// Dispatcher alone: a real Scheduler, queue depths and the clocks passed in
// by the test, the fetch hand-off recorded. No network, no loop.

#include "daemon/dispatcher.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>
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

// The fairness tests' crawl: host 0 with 5,000 pages of importance 50,
// hosts 1..8 with `good_pages` each (found in turn, as a crawl finds them,
// so the selector's ties go to each in turn); 64 connections, 16 a host
// allowed; a fetch started joins on_network and counts for its host.
struct FairnessRig {
  static constexpr double kT0 = 1.7e9;

  void Start(int good_pages) {
    sched::SchedulerOptions so;
    so.rate = 1e6;
    so.burst = 1e6;
    auto s = sched::Scheduler::Create(so);
    ASSERT_TRUE(s.ok());
    sched = std::move(s).value();
    for (int i = 0; i < 5000; ++i) ASSERT_TRUE(sched->AddUrl(0, 50.0).ok());
    for (int i = 0; i < good_pages; ++i) {
      for (sched::HostId h = 1; h <= 8; ++h) {
        ASSERT_TRUE(sched->AddUrl(h, 1.0).ok());
      }
    }
    Dispatcher::Options o;
    o.max_connections = 64;
    o.queue_bytes = 1000;
    o.max_in_flight_per_host = 16;
    Dispatcher::Stages st;
    st.parse_bytes = [] { return uint64_t{0}; };
    st.write_bytes = [] { return uint64_t{0}; };
    st.fetching = [this] { return uint64_t{on_network.size()}; };
    st.fetch = [this](sched::PageId page, double) {
      on_network.push_back(page);
      ++started[sched->page(page).host];
    };
    d = std::make_unique<Dispatcher>(io, sched.get(), o, std::move(st), kT0);
    d->Start();
  }

  std::unique_ptr<sched::Scheduler> sched;
  boost::asio::io_context io;
  std::deque<sched::PageId> on_network;
  std::map<sched::HostId, int> started;
  std::unique_ptr<Dispatcher> d;
};

// Issue #43 item 3: a host with many cheap pages takes no more than its
// fair share of the connections while other hosts wait for them. Host 0 has
// 5,000 pages of the highest importance, hosts 1..8 1,000 each; 64 connections,
// 16 per host allowed. Each round half the fetches on the network end (the
// oldest), then the dispatcher runs again.
TEST(DispatcherFairnessTest, AHostWithManyPagesHoldsItsFairShareOfSlots) {
  constexpr double kT0 = FairnessRig::kT0;
  FairnessRig rig;
  ASSERT_NO_FATAL_FAILURE(rig.Start(1000));
  std::unique_ptr<sched::Scheduler>& sched = rig.sched;
  std::deque<sched::PageId>& on_network = rig.on_network;
  std::map<sched::HostId, int>& started = rig.started;
  Dispatcher& d = *rig.d;
  int most_held_by_0 = 0;
  double t = 0;
  bool host_0_finds_nothing = false;
  // Runs `rounds`, counting what starts and host 0's most in the second
  // half only (the steady rounds).
  auto run = [&](int rounds) {
    for (int round = 0; round < rounds; ++round, t += 0.1) {
      d.Run(kT0 + t, 100 + t);
      if (round == rounds / 2) {
        started.clear();
        most_held_by_0 = 0;
      }
      most_held_by_0 = std::max(most_held_by_0, d.slots().in_flight(0));
      for (size_t n = on_network.size() / 2; n > 0; --n) {
        const sched::PageId p = on_network.front();
        on_network.pop_front();
        d.NoteOutcome(p, host_0_finds_nothing && sched->page(p).host == 0
                             ? fetch::OutcomeClass::kHttp4xx
                             : fetch::OutcomeClass::kOk);
        d.NetworkDone(p, 0);
      }
    }
  };
  run(40);
  // Nine hosts contend for 64 connections: 8 each (9 x 7 < 64 <= 9 x 8).
  EXPECT_EQ(d.fair_share().cap(), 8);
  EXPECT_EQ(d.fair_share().hosts_last_window(), 9u);
  EXPECT_LE(most_held_by_0, 8);
  int total = 0;
  for (const auto& [host, n] : started) total += n;
  ASSERT_GT(total, 0);
  // Host 0's share of what started: about a ninth, not a quarter.
  EXPECT_LT(started[0], total * 0.15) << started[0] << " of " << total;
  for (sched::HostId h = 1; h <= 8; ++h) {
    EXPECT_GT(started[h], total * 0.09) << "host " << h;
  }

  // Host 0's pages turn out 404s: its weight falls to an eighth, and with
  // it its share of the connections (one) and of what starts.
  host_0_finds_nothing = true;
  run(60);
  EXPECT_EQ(d.fair_share().Weight(0), FairShare::kMinWeight);
  EXPECT_EQ(d.fair_share().CapOf(0), 1);
  EXPECT_LE(most_held_by_0, 1);
  total = 0;
  for (const auto& [host, n] : started) total += n;
  EXPECT_LT(started[0], total * 0.03) << started[0] << " of " << total;

  // A request never sent (robots.txt, the address guard) says nothing of
  // its host: a good host's weight stays.
  sched::PageId host_1_page = 0;
  while (sched->page(host_1_page).host != 1) ++host_1_page;
  for (int i = 0; i < 100; ++i) {
    d.NoteOutcome(host_1_page, fetch::OutcomeClass::kRobotsDenied);
    d.NoteOutcome(host_1_page, fetch::OutcomeClass::kBlockedAddress);
  }
  EXPECT_GT(d.fair_share().Weight(1), 0.9f);
}

// Issue #43 item 3, parse cost: host 0's bodies each take 50 ms of the
// parse pool, the eight other hosts' 1 ms (its 100,000-link pages beside
// theirs). All find pages, so by yield alone it would start a ninth of the
// fetches; weighed by its share of the parse time it starts far fewer, and
// the parse time it takes falls with them.
TEST(DispatcherFairnessTest, AHostWhoseBodiesTakeTheParsePoolGetsFewerFetches) {
  constexpr double kT0 = FairnessRig::kT0;
  FairnessRig rig;
  ASSERT_NO_FATAL_FAILURE(rig.Start(2000));
  std::unique_ptr<sched::Scheduler>& sched = rig.sched;
  std::deque<sched::PageId>& on_network = rig.on_network;
  std::map<sched::HostId, int>& started = rig.started;
  Dispatcher& d = *rig.d;
  double parse_s[2] = {};  // host 0's, everyone's (the counted rounds)
  double t = 0;
  for (int round = 0; round < 200; ++round, t += 0.1) {
    d.Run(kT0 + t, 100 + t);
    if (round == 100) {
      started.clear();
      parse_s[0] = parse_s[1] = 0;
    }
    for (size_t n = on_network.size() / 2; n > 0; --n) {
      const sched::PageId p = on_network.front();
      on_network.pop_front();
      const sched::HostId host = sched->page(p).host;
      d.NetworkDone(p, 0);
      d.NoteOutcome(p, fetch::OutcomeClass::kOk);
      const double cost = host == 0 ? 0.05 : 0.001;
      d.NoteParseTime(host, cost);
      parse_s[0] += host == 0 ? cost : 0;
      parse_s[1] += cost;
    }
  }
  int total = 0;
  for (const auto& [host, n] : started) total += n;
  ASSERT_GT(total, 0);
  // A ninth by yield alone (measured: 400 of 3,168, 12.6%); weighed by
  // parse time 100 of 3,168 (3.2%).
  EXPECT_LT(started[0], total * 0.04) << started[0] << " of " << total;
  for (sched::HostId h = 1; h <= 8; ++h) {
    EXPECT_GT(started[h], total * 0.1) << "host " << h;
  }
  // One or two connections of the eight a host of full weight holds (its
  // share falls as it gets fewer, so its factor moves between windows).
  EXPECT_LE(d.fair_share().CapOf(0), 2);
  EXPECT_EQ(d.fair_share().cap(), 8);
  EXPECT_EQ(d.fair_share().parse_cost().hosts_over_last_window(), 1u);
  // At one connection its parse time still outweighs the others' (50 to
  // 1 a body), but no longer takes 88% of the pool (measured: 62%).
  EXPECT_LT(parse_s[0] / parse_s[1], 0.7) << parse_s[0] << " of " << parse_s[1];
}

// The scheduler's in-flight flag is the one record of what is in flight;
// the dispatcher's fetches must match it page for page, as the engine drives
// them (NetworkDone, then Finish and the page's observation), through
// completions, 304s, failures on the network and after it, a stop that lets
// the fetches out finish, and a restart of dispatch (a new scheduler
// restored from the pages' saved states, as recovery builds it, and a new
// dispatcher).
TEST(DispatcherAgreementTest, DispatcherAndSchedulerAgreeOnWhatIsInFlight) {
  constexpr double kT0 = 1.7e9;
  boost::asio::io_context io;
  sched::SchedulerOptions so;
  so.rate = 1000;
  so.burst = 1000;
  so.min_interval = 2;
  auto made = sched::Scheduler::Create(so);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<sched::Scheduler> sched = std::move(made).value();
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(sched->AddUrl(static_cast<sched::HostId>(i % 6), 1.0).ok());
  }
  std::deque<sched::PageId> on_network, parsing;
  auto make = [&](sched::Scheduler* s) {
    Dispatcher::Options o;
    o.max_connections = 8;
    o.queue_bytes = 1000;
    o.max_in_flight_per_host = 2;
    Dispatcher::Stages st;
    st.parse_bytes = [] { return uint64_t{0}; };
    st.write_bytes = [] { return uint64_t{0}; };
    st.fetching = [&on_network] { return uint64_t{on_network.size()}; };
    st.fetch = [&on_network](sched::PageId page, double) {
      on_network.push_back(page);
    };
    auto d = std::make_unique<Dispatcher>(io, s, o, std::move(st), kT0);
    d->Start();
    return d;
  };
  int checks = 0;
  auto agree = [&](const Dispatcher& d, const sched::Scheduler& s) {
    size_t flagged = 0;
    for (sched::PageId p = 0; p < s.size(); ++p) {
      const bool flag = s.page(p).in_flight();
      flagged += flag ? 1 : 0;
      ASSERT_EQ(flag, d.StartedAt(p).has_value()) << "page " << p;
    }
    ASSERT_EQ(flagged, d.in_flight());
    ASSERT_EQ(d.on_network(), on_network.size());
    ASSERT_EQ(d.in_flight(), on_network.size() + parsing.size());
    ASSERT_EQ(d.slots().total_in_flight(), on_network.size());
    ++checks;
  };
  uint64_t outcomes[3] = {};  // fetched, 304, failed
  // One completion as the engine does it: Finish, then the observation.
  auto complete = [&](Dispatcher& d, sched::Scheduler& s, sched::PageId page,
                      double now, double gate_now, int outcome) {
    EXPECT_GT(d.Finish(page, gate_now), 0);
    sched::Observation obs{page, now, sched::FailedObs{}};
    if (outcome == 0) obs.event = sched::FetchedObs{};
    if (outcome == 1) obs.event = sched::NotModifiedObs{};
    (void)s.Observe(obs);
    ++outcomes[outcome];
  };
  // A turn of the engine at step i: the network hands back up to three
  // fetches (every fifth a failure, completed at once), the pool parses up
  // to two, then a dispatch.
  int step = 0;
  auto turn = [&](Dispatcher& d, sched::Scheduler& s, bool dispatch) {
    const double now = kT0 + step * 0.5, gate_now = 100 + step * 0.5;
    for (int k = 0; k < 3 && !on_network.empty(); ++k) {
      const sched::PageId page = on_network.front();
      on_network.pop_front();
      d.NetworkDone(page, gate_now + (page % 3) * 0.5);
      if ((step + k) % 5 == 0) {
        complete(d, s, page, now, gate_now, 2);
      } else {
        parsing.push_back(page);
      }
      agree(d, s);
    }
    for (int k = 0; k < 2 && !parsing.empty(); ++k) {
      const sched::PageId page = parsing.front();
      parsing.pop_front();
      complete(d, s, page, now, gate_now, (step + k) % 7 == 0 ? 2 : k);
      agree(d, s);
    }
    if (dispatch) d.Run(now, gate_now);
    agree(d, s);
    ++step;
  };

  auto d = make(sched.get());
  for (int i = 0; i < 200; ++i) turn(*d, *sched, true);
  ASSERT_GT(d->in_flight(), 0u);
  // A stop: nothing more is dispatched; the fetches out finish.
  d->Stop();
  const uint64_t dispatched = d->dispatched_total();
  while (!on_network.empty() || !parsing.empty()) turn(*d, *sched, true);
  EXPECT_EQ(d->dispatched_total(), dispatched);
  EXPECT_EQ(d->in_flight(), 0u);

  // A restart: every page's saved state into a new scheduler, a new
  // dispatcher; both start with nothing in flight.
  made = sched::Scheduler::Create(so);
  ASSERT_TRUE(made.ok());
  std::unique_ptr<sched::Scheduler> restored = std::move(made).value();
  for (sched::PageId p = 0; p < sched->size(); ++p) {
    ASSERT_TRUE(restored->RestorePage(sched->Snapshot(p)).ok());
  }
  d = make(restored.get());
  agree(*d, *restored);
  for (int i = 0; i < 200; ++i) turn(*d, *restored, true);
  EXPECT_GT(d->dispatched_total(), 100u);
  EXPECT_GT(outcomes[0], 100u);
  EXPECT_GT(outcomes[1], 50u);
  EXPECT_GT(outcomes[2], 50u);
  EXPECT_GT(checks, 1000);
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

// ClusterAdapter alone (no CrawlLoop): a real page book, scheduler and
// frontier, and the engine's hooks recorded. The owner thread's handlers
// are driven with hand-built views and replays where the logic needs no
// NATS (ownership, replay and seeds, routing, the share, /status "cluster"
// and its /metrics); one test runs the node against a real nats-server on
// loopback (tests/cluster/nats_server.h) until it owns every shard.

#include "daemon/cluster_adapter.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "cluster/shard_map.h"
#include "store/records.h"
#include "tests/cluster/nats_server.h"
#include "tests/store/temp_dir.h"

namespace freshd::daemon {
namespace {

constexpr int kShards = 8;

class ClusterAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = sched::Scheduler::Create(sched::SchedulerOptions{});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    sched_ = std::move(s).value();
    book_ = std::make_unique<PageBook>(sched_.get(), dir_.path() + "/book");
    CrawlerConfig c;
    c.scope = "seed-hosts";
    auto scope = UrlScope::Create(c);
    ASSERT_TRUE(scope.ok()) << scope.status().ToString();
    frontier_ = std::make_unique<Frontier>(std::move(scope).value(), 100,
                                           book_.get(), sched_.get());
    frontier_->AddScope("http://a.test/");
    StoreConfig sc;
    sc.path = dir_.path() + "/store";
    sc.sync_interval_s = 1e9;
    sc.block_cache_bytes = 1 << 20;
    auto store = store::PageStore::Open(sc);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  // An adapter on `nats_url` (never started unless a test starts it).
  std::unique_ptr<ClusterAdapter> Adapter(const std::string& nats_url,
                                          bool changes = false) {
    ClusterAdapter::Options o;
    o.cluster.nats_url = nats_url;
    o.cluster.node = "n1";
    o.cluster.shards = kShards;
    o.cluster.heartbeat_s = 0.2;
    o.cluster.ttl_s = 1;
    o.changes = changes;
    o.max_seeds = 10;
    o.max_per_host = 100;
    ClusterAdapter::Hooks h;
    h.add_url = [this](const std::string& url, double importance, bool seed) {
      added_.push_back(url);
      return frontier_->AddUrl(url, importance, seed, UnixNow());
    };
    h.sitemap_signal = [this](sched::PageId, double, double,
                              sched::SignalSource source) {
      signals_.emplace_back(cluster::WorkItem::Kind::kSitemap, source);
    };
    h.pushed_signal = [this](sched::PageId, double, double,
                             sched::SignalSource source) {
      signals_.emplace_back(cluster::WorkItem::Kind::kSignal, source);
    };
    h.commit = [this](std::function<void(Status)> committed) {
      ++commits_;
      if (committed) committed(Status::OK());
    };
    h.dispatch = [this] { ++dispatches_; };
    h.set_rate = [this](double rate) { rates_.push_back(rate); };
    h.budget = [] { return 12.0; };
    h.pages_fetched = [] { return uint64_t{3}; };
    h.fetch_rate = [] { return nlohmann::json(0.5); };
    auto a =
        ClusterAdapter::Create(io_, std::move(o), book_.get(), frontier_.get(),
                               sched_.get(), store_.get(), std::move(h));
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? std::move(a).value() : nullptr;
  }

  // A view of `members` (sorted) in which this node owns `owned` shards.
  static cluster::ClusterView View(std::vector<std::string> members,
                                   bool owned) {
    cluster::ClusterView v;
    v.node = "n1";
    v.connected = true;
    for (auto& m : members) {
      cluster::MemberInfo info;
      info.node = m;
      info.shards = kShards;
      v.members.push_back(info);
    }
    v.owned = std::make_shared<const std::vector<bool>>(kShards, owned);
    v.shards_owned = owned ? kShards : 0;
    return v;
  }

  static std::vector<uint32_t> AllShards() {
    std::vector<uint32_t> s;
    for (uint32_t i = 0; i < kShards; ++i) s.push_back(i);
    return s;
  }

  boost::asio::io_context io_;
  store::TempDir dir_;
  std::unique_ptr<sched::Scheduler> sched_;
  std::unique_ptr<PageBook> book_;
  std::unique_ptr<Frontier> frontier_;
  std::unique_ptr<store::PageStore> store_;
  std::vector<std::string> added_;
  std::vector<double> rates_;
  int commits_ = 0;
  int dispatches_ = 0;
  // The signals applied from routed work: the item's kind, the source.
  std::vector<std::pair<cluster::WorkItem::Kind, sched::SignalSource>> signals_;
};

// No server listens on port 1: the parts are created, never connected.
constexpr char kNoNats[] = "nats://127.0.0.1:1";

TEST_F(ClusterAdapterTest, BeforeAViewNothingIsOwnedAndTheWholeRateIsOurs) {
  auto a = Adapter(kNoNats);
  ASSERT_NE(a, nullptr);
  const sched::HostId h = book_->InternHost("a.test").value();
  EXPECT_FALSE(a->OwnsHost(h));
  EXPECT_DOUBLE_EQ(a->RateShare(), 12.0);
  const nlohmann::json c = a->ClusterJson();
  EXPECT_EQ(c["node"], "n1");
  EXPECT_EQ(c["nodes"], 0);
  EXPECT_EQ(c["shards"], kShards);
  EXPECT_FALSE(c["connected"].get<bool>());
  EXPECT_EQ(c["problem"], "not connected yet");
  EXPECT_TRUE(c["lambda"].is_null());
  EXPECT_TRUE(c["changes"].is_null());  // feed off: no publisher
  EXPECT_EQ(c["work"]["routed"], 0);
}

TEST_F(ClusterAdapterTest, AHostIsOwnedOnceItsShardIsOwnedAndReplayed) {
  auto a = Adapter(kNoNats);
  ASSERT_NE(a, nullptr);
  const sched::HostId h = book_->InternHost("a.test").value();
  a->KeepSeed("http://a.test/", 2.0);
  a->OnClusterView(View({"n1", "n2"}, true));
  // Two members, our own heartbeat heard with no λ yet: a share of 12.
  ASSERT_FALSE(rates_.empty());
  EXPECT_DOUBLE_EQ(rates_.back(), a->RateShare());
  EXPECT_GT(a->RateShare(), 0);
  EXPECT_LE(a->RateShare(), 12.0);
  EXPECT_FALSE(a->OwnsHost(h));  // owned, not replayed yet
  EXPECT_TRUE(added_.empty());

  // A page another node kept, and the end of the replay: the page joins
  // the book, the kept seed is added, one commit.
  store::PageRecord record;
  record.url = "http://a.test/kept";
  record.etag = "\"e\"";
  std::string value;
  ASSERT_TRUE(store::EncodePageValue(record, &value).ok());
  const int commits = commits_;
  // A page removed for good by its owner: its last message is a tombstone
  // (an empty record, daemon/page_book.h "Removal"), adopted by none.
  a->OnReplay(AllShards(), {{"http://a.test/removed", ""}}, /*done=*/false);
  EXPECT_FALSE(book_->Find("http://a.test/removed").has_value());
  a->OnReplay(AllShards(), {{"http://a.test/kept", value}}, /*done=*/true);
  EXPECT_TRUE(a->OwnsHost(h));
  ASSERT_TRUE(book_->Find("http://a.test/kept").has_value());
  EXPECT_EQ(book_->cold_fields(*book_->Find("http://a.test/kept")).etag,
            "\"e\"");
  EXPECT_EQ(added_, std::vector<std::string>{"http://a.test/"});
  EXPECT_EQ(commits_, commits + 1);
  EXPECT_EQ(a->ClusterJson()["work"]["pages_adopted"], 1);

  // The shard released: not owned, and replayed again when next acquired.
  a->OnClusterView(View({"n1", "n2"}, false));
  EXPECT_FALSE(a->OwnsHost(h));
  a->OnClusterView(View({"n1", "n2"}, true));
  EXPECT_FALSE(a->OwnsHost(h));
}

TEST_F(ClusterAdapterTest, WorkForOtherShardsIsRoutedInScopeOnly) {
  auto a = Adapter(kNoNats);
  ASSERT_NE(a, nullptr);
  a->OnClusterView(View({"n1", "n2"}, false));  // we own nothing
  using Kind = cluster::WorkItem::Kind;
  EXPECT_TRUE(a->RouteAway("http://a.test/x", Kind::kLink, 1));
  EXPECT_FALSE(a->RouteAway("http://out.test/x", Kind::kLink, 1));  // scope
  EXPECT_FALSE(a->RouteAway("http://out.test/x", Kind::kSitemap, 0));
  EXPECT_TRUE(a->RouteAway("http://out.test/", Kind::kSeed, 1));
  auto join = std::make_shared<RouteJoin>();
  EXPECT_TRUE(a->RouteAway("http://a.test/y", Kind::kSignal, 0, join));
  EXPECT_EQ(join->pending, 1u);  // arrives once the stream stores it
  EXPECT_EQ(a->ClusterJson()["work"]["routed"], 3);
  a->OnClusterView(View({"n1", "n2"}, true));  // ours now
  EXPECT_FALSE(a->RouteAway("http://a.test/x", Kind::kLink, 1));
}

// A routed signal or dated entry is applied under the source it names
// (IndexNow, WebSub, a feed); one naming none (an older node's) or an
// unknown one, under its kind's own (signal, sitemap).
TEST_F(ClusterAdapterTest, RoutedSignalsKeepTheirSource) {
  auto a = Adapter(kNoNats);
  ASSERT_NE(a, nullptr);
  a->OnClusterView(View({"n1"}, true));
  ASSERT_TRUE(frontier_->AddUrl("http://a.test/p", 1, false, UnixNow()));
  using Kind = cluster::WorkItem::Kind;
  using Source = sched::SignalSource;
  const double lastmod = UnixNow() - 10;
  std::vector<cluster::DeliveredWork> batch;
  const auto item = [&](Kind kind, double value, const std::string& source) {
    cluster::DeliveredWork d;
    d.token = batch.size() + 1;
    d.shard = cluster::ShardOf("a.test", kShards);
    d.item = {kind, "http://a.test/p", value, source};
    batch.push_back(d);
  };
  item(Kind::kSignal, -INFINITY, "indexnow");
  item(Kind::kSignal, -INFINITY, "");
  item(Kind::kSignal, -INFINITY, "no-such-source");
  item(Kind::kSitemap, lastmod, "websub");
  item(Kind::kSitemap, lastmod + 1, "feed");
  item(Kind::kSitemap, lastmod + 2, "");
  a->OnWork(std::move(batch));
  const std::vector<std::pair<Kind, Source>> want = {
      {Kind::kSignal, Source::kIndexNow},
      {Kind::kSignal, Source::kPushedHint},
      {Kind::kSignal, Source::kPushedHint},
      {Kind::kSitemap, Source::kWebSub},
      {Kind::kSitemap, Source::kFeedEntry},
      {Kind::kSitemap, Source::kSitemapLastmod}};
  EXPECT_EQ(signals_, want);
  EXPECT_EQ(a->ClusterJson()["work"]["applied"], 6);
}

// Another node's host, as a WebSub subscription sees it: only a sound view
// that gives the host's shard to another live member says so; before a
// view, without its own heartbeat, or with the shard given to this node
// (the handoff pending) it does not.
TEST_F(ClusterAdapterTest, AHostIsOwnedElsewhereOnlyWhenASoundViewSaysSo) {
  auto a = Adapter(kNoNats);
  ASSERT_NE(a, nullptr);
  // A host of n2's shards and one of n1's, with members {n1, n2}.
  const std::vector<std::string> members = {"n1", "n2"};
  const std::vector<bool> ours = cluster::OwnedShards("n1", members, kShards);
  std::optional<sched::HostId> theirs, mine;
  for (int i = 0; i < 200 && !(theirs && mine); ++i) {
    const std::string name = "h" + std::to_string(i) + ".test";
    const bool is_ours = ours[cluster::ShardOf(name, kShards)];
    auto& slot = is_ours ? mine : theirs;
    if (!slot) slot = book_->InternHost(name).value();
  }
  ASSERT_TRUE(theirs && mine);
  EXPECT_FALSE(a->HostOwnedElsewhere(*theirs));  // no view yet

  cluster::ClusterView alone = View({"n1"}, false);
  alone.problem = "own heartbeat not seen within ttl";
  a->OnClusterView(alone);
  EXPECT_FALSE(a->HostOwnedElsewhere(*theirs));  // not a sound view

  // Sound, nothing acquired yet: n2's host is elsewhere, n1's is pending.
  a->OnClusterView(View(members, false));
  EXPECT_TRUE(a->HostOwnedElsewhere(*theirs));
  EXPECT_FALSE(a->HostOwnedElsewhere(*mine));
  // n2 gone: both given to n1.
  a->OnClusterView(View({"n1"}, false));
  EXPECT_FALSE(a->HostOwnedElsewhere(*theirs));
  // A view of others only (this node not heard): nothing is said.
  a->OnClusterView(View({"n2"}, false));
  EXPECT_FALSE(a->HostOwnedElsewhere(*theirs));
}

// A node that joined with no pages (λ 0) is stepped to a share of 0; once
// its shards bring pages, the next Tick gives it an equal share again (it
// could not measure a λ at a rate of 0).
TEST_F(ClusterAdapterTest, AShareOfNothingEndsWhenPagesCome) {
  auto a = Adapter(kNoNats);
  ASSERT_NE(a, nullptr);
  a->Tick();  // λ measured: no pages, 0
  cluster::ClusterView v = View({"n1", "n2"}, false);
  v.members[0].lambda = 0;  // n1: nothing to fetch
  v.members[1].lambda = 1;
  v.members[1].rate_share = 12;
  a->OnClusterView(v);
  EXPECT_DOUBLE_EQ(a->RateShare(), 0);
  a->Tick();  // still no pages: still nothing
  EXPECT_DOUBLE_EQ(a->RateShare(), 0);
  ASSERT_TRUE(frontier_->AddUrl("http://a.test/p", 1, false, UnixNow()));
  a->Tick();
  EXPECT_DOUBLE_EQ(a->RateShare(), 6.0);  // 12 between two
  ASSERT_FALSE(rates_.empty());
  EXPECT_DOUBLE_EQ(rates_.back(), 6.0);
}

TEST_F(ClusterAdapterTest, RouteJoinReportsTheFirstErrorOnceAllArrive) {
  RouteJoin join;
  join.pending = 2;
  std::vector<Status> seen;
  join.Then([&](Status s) { seen.push_back(s); });
  join.Arrive(Status::IOError("gone"));
  EXPECT_TRUE(seen.empty());
  join.Arrive(Status::OK());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].code(), Status::Code::kIOError);
  join.Then([&](Status s) { seen.push_back(s); });  // already complete
  EXPECT_EQ(seen.size(), 2u);
}

TEST_F(ClusterAdapterTest, MetricsFollowTheStatusJson) {
  auto a = Adapter(kNoNats, /*changes=*/true);
  ASSERT_NE(a, nullptr);
  a->OnClusterView(View({"n1"}, true));
  nlohmann::json status = {{"cluster", a->ClusterJson()}};
  ASSERT_TRUE(status["cluster"]["changes"].is_object());
  std::string out;
  ClusterAdapter::AppendMetrics(status, &out);
  EXPECT_NE(out.find("\nfreshd_cluster_nodes 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nfreshd_cluster_shards_owned 8\n"), std::string::npos);
  EXPECT_NE(out.find("freshd_cluster_info{node=\"n1\"} 1\n"),
            std::string::npos);
  EXPECT_NE(out.find("\nfreshd_cluster_work_routed_total 0\n"),
            std::string::npos);
  // The change stream's families last.
  EXPECT_GT(out.find("freshd_cluster_changes_published_total"),
            out.find("freshd_cluster_info"));
  std::string none;
  ClusterAdapter::AppendMetrics({{"cluster", nullptr}}, &none);
  EXPECT_EQ(none, "");
}

TEST_F(ClusterAdapterTest, ASingleNodeOwnsEveryShardOfARealNatsServer) {
  const std::filesystem::path dir =
      std::filesystem::path(dir_.path()) / "nats_server";
  testing::NatsServer server(dir);
  ASSERT_TRUE(server.ok());
  auto a = Adapter(server.url(), /*changes=*/true);
  ASSERT_NE(a, nullptr);
  const sched::HostId h = book_->InternHost("a.test").value();
  a->Start();
  // The node's and the router's threads post here: run this thread until
  // the view gives every shard and the (empty) page stream was replayed.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline &&
         !(a->ClusterJson()["shards_owned"] == kShards && a->OwnsHost(h))) {
    io_.run_for(std::chrono::milliseconds(50));
    io_.restart();
  }
  const nlohmann::json c = a->ClusterJson();
  EXPECT_EQ(c["shards_owned"], kShards) << c.dump();
  EXPECT_TRUE(a->OwnsHost(h));
  EXPECT_TRUE(c["connected"].get<bool>());
  EXPECT_EQ(c["nodes"], 1);
  EXPECT_DOUBLE_EQ(a->RateShare(), 12.0);  // alone: the whole budget
  EXPECT_TRUE(c["work"]["connected"].get<bool>());
  EXPECT_TRUE(c["changes"].is_object());
  a->Tick();  // λ, share and summary to the heartbeat: no throw, no block
  a->StopAll();
}

}  // namespace
}  // namespace freshd::daemon

#include "daemon/crawl_loop.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <thread>

#include "base/clock.h"
#include "daemon/fetch_state.h"
#include "daemon/scheduler_options.h"
#include "parse/html_fingerprint.h"
#include "parse/public_suffix.h"
#include "parse/shingle.h"
#include "parse/sitemap.h"
#include "parse/url.h"
#include "spdlog/spdlog.h"
#include "store/cdxj.h"

namespace freshd::daemon {
namespace {

// Housekeeping: robots refresh, fetch-state saves, the status snapshot.
constexpr double kHousekeepingS = 0.25;

bool IsHtml(const std::string& type) {
  return type == "text/html" || type == "application/xhtml+xml";
}

}  // namespace

CrawlLoop::CrawlLoop(boost::asio::io_context& io, const Config& config)
    : io_(io), config_(config), housekeeping_(io), lag_probe_(io) {}

CrawlLoop::~CrawlLoop() {
  *alive_ = false;
  if (committer_) committer_->Stop();
  if (cluster_) cluster_->StopMembership();
  if (network_done_) network_done_->Stop();  // no hand-back after
  if (parse_) parse_->Stop();  // queued parses dropped, no apply after
  if (net_) net_->Stop();      // no callback after this
  if (writer_) (void)writer_->Stop();
  // What was marked and never handed to the writer (a loop destroyed
  // without Stop): committed here, so nothing acknowledged is lost.
  if (book_ && store_ &&
      (book_->marked() || (controls_ && controls_->marked()) ||
       (websub_ && websub_->marked()))) {
    store::StoreBatch batch;
    book_->TakeBatch(&batch);
    if (controls_) controls_->TakeBatch(&batch);
    if (websub_) websub_->TakeBatch(&batch);
    if (Status s = store_->Commit(batch, UnixNow()); !s.ok()) {
      spdlog::error("store: {}", s.ToString());
    }
    (void)store_->MaybeSync(UnixNow(), /*force=*/true);
  }
}

Result<std::unique_ptr<CrawlLoop>> CrawlLoop::Create(
    boost::asio::io_context& io, const Config& config,
    RecoveryProgress* progress) {
  std::unique_ptr<CrawlLoop> loop(new CrawlLoop(io, config));
  loop->progress_ = progress;
  Status s = loop->Init();
  loop->progress_ = nullptr;
  if (!s.ok()) return s;
  return loop;
}

Status CrawlLoop::Init() {
  started_unix_ = UnixNow();
  auto scope = UrlScope::Create(config_.crawler);
  if (!scope.ok()) return scope.status();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned parse_threads =
      config_.engine.parse_threads > 0
          ? static_cast<unsigned>(config_.engine.parse_threads)
          : cores;
  // Each body's parse time counts against its host's fair share
  // (FairShare's ParseCost), on this thread.
  parse_ = std::make_unique<ParseQueue>(
      io_, parse_threads, [this](std::string_view url, double cpu_s) {
        if (!book_ || !dispatcher_) return;
        const std::optional<sched::HostId> host =
            book_->hosts().Find(parse::UrlAuthority(url));
        if (host) dispatcher_->NoteParseTime(*host, cpu_s);
      });

  // LevelDB creates the database directory but not its parents.
  std::error_code ignored;
  std::filesystem::create_directories(
      std::filesystem::path(config_.store.path).parent_path(), ignored);
  auto store = store::PageStore::Open(config_.store);
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();

  auto sched = sched::Scheduler::Create(SchedulerOptionsFromConfig(config_));
  if (!sched.ok()) return sched.status();
  sched_ = std::move(sched).value();
  // The book's URL file sits in the store's directory (LevelDB created it
  // and leaves a file it does not name alone; this one is unlinked anyway).
  book_ = std::make_unique<PageBook>(sched_.get(), config_.store.path);
  // The change feed's staleness: the book reads and writes the sketches.
  if (config_.feed.enabled) book_->set_sketch_store(store_.get());
  // The validators of pages whose records are durable: read at dispatch.
  book_->set_store(store_.get());
  book_->set_removal({static_cast<uint32_t>(config_.crawler.gone_after_tries),
                      config_.crawler.gone_after_unreachable_s});
  book_->set_max_aliases(static_cast<size_t>(
      std::min<uint64_t>(config_.crawler.max_aliases, size_t{1} << 32)));
  frontier_ = std::make_unique<Frontier>(std::move(scope).value(),
                                         config_.crawler.max_urls_per_host,
                                         book_.get(), sched_.get());
  controls_ = std::make_unique<OperatorControls>();
  frontier_->set_controls(controls_.get());
  frontier_->set_max_new_urls_per_minute(
      config_.crawler.max_new_urls_per_host_per_minute);
  // The URLs go straight into the book (no transient string per page: at
  // 1M pages those left ~200 B/page of freed heap resident), and the scope
  // and origins are noted as they pass (no read of the URL file per page).
  RecoveryOptions options;
  options.progress = progress_;
  options.clock = UnixNow;  // the scheduler's clock (TryDispatch's now)
  SignalIntake::Options intake;
  intake.site_feeds = config_.site_feeds;
  intake.max_decompressed_bytes = config_.fetch.max_decompressed_bytes;
  intake.robots_cache_s = config_.politeness.robots_cache_s;
  intake.keep_raw = !config_.store.warc_dir.empty();
  intake.pushed_poll_slowdown = config_.push.websub_poll_slowdown;
  SignalIntake::Hooks hooks;
  hooks.fetch = [this](fetch::CrawlRequest req, SignalIntake::FetchDone done) {
    net_->Fetch(std::move(req), std::move(done));
  };
  hooks.refresh_robots = [this](std::vector<std::string> origins) {
    net_->RefreshRobots(std::move(origins));
  };
  hooks.archive = [this](fetch::FetchResult r, double started) {
    ArchiveOnly(std::move(r), started);
  };
  hooks.route_away = [this](const std::string& url,
                            cluster::WorkItem::Kind kind, double value,
                            sched::SignalSource source) {
    return RouteAway(url, kind, value, nullptr, source);
  };
  // A host an operator holds (paused, blocked) is not contacted for its
  // robots.txt refresh or site feeds either, as another node's is not.
  hooks.owned = [this](sched::HostId h) {
    return (!cluster_ || cluster_->OwnsHost(h)) &&
           !controls_->HostHeld(h, book_->hosts().Name(h));
  };
  hooks.url_held = [this](const std::string& url) {
    return controls_->PatternHeld(url);
  };
  hooks.commit = [this] { RequestCommit(); };
  hooks.dispatch = [this] { TryDispatch(); };
  hooks.feed_hubs = [this](const std::string& feed, const std::string& self,
                           const std::vector<std::string>& hubs) {
    if (websub_) websub_->Discovered(feed, self, hubs);
  };
  hooks.feed_forgotten = [this](const std::string& feed) {
    if (websub_) websub_->Forget(feed);
  };
  intake_ = std::make_unique<SignalIntake>(io_, std::move(intake), book_.get(),
                                           sched_.get(), frontier_.get(),
                                           parse_.get(), std::move(hooks));
  auto report = book_->Restore(
      *store_,
      [this](sched::PageId id, std::string_view url) {
        frontier_->AddScope(url);
        if (sched_->page(id).fetched()) intake_->NoteOrigin(id, url);
      },
      options);
  if (!report.ok()) return report.status();
  recovery_ = std::move(report).value();
  if (Status r = SetRules(config_.rules); !r.ok()) return r;
  if (Status c = RestoreControls(); !c.ok()) return c;

  auto net = NetworkStage::Create(config_);
  if (!net.ok()) return net.status();
  net_ = std::move(net).value();
  network_done_ = std::make_unique<HandoffQueue<NetworkDone>>(
      io_, [this](std::vector<NetworkDone>& batch) { OnNetworkBatch(batch); });
  done_batch_ = std::make_unique<TurnBatch<NetworkDone>>(
      net_->io(),
      [this](std::vector<NetworkDone>& batch) { HandNetworkTurn(batch); });
  fetch_batch_ =
      std::make_unique<TurnBatch<NetworkStage::Request>>(io_, net_->requests());
  fetch::CrawlerState state;
  if (Status st = LoadFetchState(&state); !st.ok()) return st;
  if (book_->size() > 0) {
    // A restart: a host contacted after the last save (SIGKILL) must still
    // get its min_delay, so no host is contacted before it has passed.
    state.hold_all_until = NetworkStage::Now() + config_.politeness.min_delay_s;
  }
  net_->ImportState(state);
  fetch_state_restored_ = {state.robots.size(), state.hosts.size()};
  // The same holds for the dispatcher's host slots (below), by host id.
  std::vector<std::pair<sched::HostId, double>> held_hosts;
  for (const fetch::GateHostSnapshot& g : state.hosts) {
    std::optional<sched::HostId> id = book_->hosts().Find(g.host);
    if (id && g.next_allowed > NetworkStage::Now()) {
      held_hosts.emplace_back(*id, g.next_allowed);
    }
  }
  last_fetch_state_save_ = started_unix_;
  net_->set_sitemap_handler(
      [this, alive = alive_](const std::string& origin,
                             const std::vector<std::string>& sitemaps) {
        // On the network thread: hand the list to the scheduler's thread.
        boost::asio::post(io_, [this, alive, origin, sitemaps] {
          if (*alive) intake_->OnSitemaps(origin, sitemaps);
        });
      });

  if (Status c = InitCluster(); !c.ok()) return c;

  if (!config_.store.warc_dir.empty()) {
    // robots.txt exchanges are archived too (network thread: post them).
    net_->set_archive_handler([this, alive = alive_](fetch::FetchResult r) {
      const double started = UnixNow() - r.elapsed_s;
      boost::asio::post(io_,
                        [this, alive, started, r = std::move(r)]() mutable {
                          if (*alive) ArchiveOnly(std::move(r), started);
                        });
    });
    // Files a killed daemon left open: finished and indexed first.
    auto recovered =
        store::RecoverOpenWarcFiles(config_.store.warc_dir, "freshd");
    if (!recovered.ok()) {
      spdlog::error("warc: finishing files left open: {}",
                    recovered.status().ToString());
    } else {
      for (const std::string& f : *recovered) {
        spdlog::warn("warc: {} was left open (a crash); finished and indexed",
                     f);
      }
    }
    store::WarcWriterOptions wo;
    wo.dir = config_.store.warc_dir;
    wo.rotate_bytes = config_.store.warc_rotate_bytes;
    wo.software = std::string("freshd/") + FRESHD_VERSION;
    wo.user_agent = UserAgentHeader(config_.crawler);
    wo.operator_contact = config_.crawler.contact_url;
    auto w = store::WarcWriter::Open(wo);
    if (!w.ok()) return w.status();
    warc_ = std::move(w).value();
  }
  writer_ = std::make_unique<StoreWriter>(
      store_.get(), warc_.get(), config_.store.sync_interval_s, config_.feed,
      ArchivePolicy{
          config_.store.warc_dedup ? config_.store.warc_dedup_entries : 0,
          config_.store.warc_errors});
  committer_ = std::make_unique<GroupCommitter>(
      io_, writer_.get(),
      RecordSource{[this] {
                     return book_->marked() || controls_->marked() ||
                            (websub_ && websub_->marked());
                   },
                   [this](store::StoreBatch* batch, uint64_t* failures) {
                     book_->TakeBatch(batch, failures);
                     controls_->TakeBatch(batch);
                     if (websub_) websub_->TakeBatch(batch);
                   },
                   [this](bool ok) { book_->Committed(ok); }},
      warc_ != nullptr);
  committer_->set_on_committed([this] { TryDispatch(); });
  Dispatcher::Options dispatch;
  dispatch.max_connections = static_cast<size_t>(config_.fetch.max_connections);
  dispatch.queue_bytes = config_.engine.queue_bytes;
  dispatch.max_in_flight_per_host = config_.politeness.max_in_flight_per_host;
  Dispatcher::Stages stages;
  stages.parse_bytes = [this] {
    return parse_->bytes() + parse_handing_bytes_.load();
  };
  stages.write_bytes = [this] {
    return committer_->pending_bytes() + writer_->stats().queued_bytes;
  };
  stages.fetching = [this] { return net_->pending(); };
  if (cluster_) {
    stages.owned = [this](sched::HostId h) { return cluster_->OwnsHost(h); };
  }
  stages.held = [this](sched::HostId h) {
    return controls_->HostHeld(h, book_->hosts().Name(h));
  };
  stages.fetch = [this](sched::PageId page, double) { StartFetch(page); };
  dispatcher_ = std::make_unique<Dispatcher>(io_, sched_.get(), dispatch,
                                             std::move(stages), started_unix_);
  dispatcher_->HoldHosts(held_hosts, state.hold_all_until);
  observer_ = std::make_unique<PageObserver>(
      PageObserver::Options{config_.site_feeds.enabled, config_.feed.enabled},
      book_.get(), sched_.get(), frontier_.get(), intake_.get(),
      committer_.get(),
      [this](const std::string& url, cluster::WorkItem::Kind kind,
             double value) { return RouteAway(url, kind, value); });
  if (cluster_) {  // each page's record to the page stream, once committed
    writer_->set_committed_hook(
        [this](const std::vector<CommittedPage>& pages) {
          cluster_->PublishPages(pages);  // writer thread
        });
  }
  if (cluster_ && cluster_->publishes_changes()) {
    // Each change event to the change stream, once committed.
    writer_->set_feed_hook([this](const std::vector<store::FeedEvent>& e) {
      cluster_->PublishChanges(e);  // writer thread
    });
  }
  if (!config_.push.listen.empty()) {
    InitIndexNow();
    if (Status w = InitWebSub(); !w.ok()) return w;
  }
  StatusViews::Options views;
  views.policy = config_.sched.policy;
  views.max_interval_s = config_.sched.max_interval_s;
  views.progress_s = config_.log.progress_s;
  views.store_path = config_.store.path;
  views.warc_dir = config_.store.warc_dir;
  views.started_unix = started_unix_;
  views_ = std::make_unique<StatusViews>(std::move(views), sched_.get(),
                                         book_.get(), &frontier_->rules(),
                                         &recovery_, StatusSources());
  return Status::OK();
}

void CrawlLoop::InitIndexNow() {
  IndexNowReceiver::Options o;
  o.key_cache_s = config_.push.key_cache_s;
  o.host_requests_per_minute = config_.push.host_requests_per_minute;
  o.max_pending_per_host = config_.push.max_pending_per_host;
  IndexNowReceiver::Hooks h;
  // In scope, and with scope "any" a host the crawl already knows: a ping
  // never makes freshd fetch from a stranger.
  h.in_scope = [this](const std::string& url) {
    return frontier_->InScope(url) &&
           (config_.crawler.scope != "any" ||
            book_->hosts().Find(parse::UrlAuthority(url)).has_value());
  };
  h.fetch = [this](std::string url,
                   std::function<void(fetch::FetchResult)> done) {
    fetch::CrawlRequest req;
    req.url = std::move(url);
    net_->Fetch(std::move(req), [this, alive = alive_, done = std::move(done)](
                                    fetch::FetchResult r, double) mutable {
      boost::asio::post(
          io_, [alive, done = std::move(done), r = std::move(r)]() mutable {
            if (*alive) done(std::move(r));
          });
    });
  };
  h.signal = [this](std::vector<std::string> urls) {
    Signal(urls, -std::numeric_limits<double>::infinity(), nullptr,
           sched::SignalSource::kIndexNow);
  };
  h.now = [] { return NetworkStage::Now(); };
  indexnow_ = std::make_unique<IndexNowReceiver>(o, std::move(h));
}

Status CrawlLoop::InitWebSub() {
  WebSubSubscriptions::Options o;
  o.public_url = config_.push.public_url;
  o.max_subscriptions =
      static_cast<size_t>(config_.push.websub_max_subscriptions);
  o.lease_s = config_.push.websub_lease_s;
  o.min_renew_interval_s = config_.push.websub_min_renew_interval_s;
  o.retry_base_s = std::max(o.retry_base_s, o.min_renew_interval_s);
  WebSubSubscriptions::Hooks h;
  // The hub request goes through the crawler: politeness gate and SSRF
  // guard as any fetch ([fetch] allow_private_addresses decides for a hub
  // in private ranges), outside the token budget.
  h.post = [this](std::string url, std::string form,
                  std::function<void(fetch::FetchResult)> done) {
    fetch::CrawlRequest req;
    req.url = std::move(url);
    req.form_body = std::move(form);
    net_->Fetch(std::move(req), [this, alive = alive_, done = std::move(done)](
                                    fetch::FetchResult r, double) mutable {
      boost::asio::post(
          io_, [alive, done = std::move(done), r = std::move(r)]() mutable {
            if (*alive) done(std::move(r));
          });
    });
  };
  h.set_pushed = [this](const std::string& feed, bool pushed) {
    intake_->SetFeedPushed(feed, pushed);
  };
  h.deliver = [this](const std::string& feed, std::string body) {
    intake_->ApplyPushedFeed(feed, std::move(body));
  };
  if (cluster_) {
    // A subscription belongs to its feed's shard owner: a node the view
    // takes the host from lets it go (not one still starting, whose view
    // owns nothing yet).
    h.elsewhere = [this](const std::string& feed) {
      auto host = book_->hosts().Find(parse::UrlAuthority(feed));
      return host && cluster_->HostOwnedElsewhere(*host);
    };
  }
  h.commit = [this] { RequestCommit(); };
  h.now = [] { return UnixNow(); };
  websub_ = std::make_unique<WebSubSubscriptions>(o, std::move(h));
  std::vector<store::SubscriptionRecord> records;
  Status s = store_->ForEachSubscription(
      [&](const store::SubscriptionRecord& r) {
        records.push_back(r);
        return true;
      },
      /*skip_corrupt=*/true);
  if (!s.ok()) return s;
  const size_t kept = websub_->Restore(records);
  if (!records.empty()) {
    spdlog::info("websub: {} stored subscriptions restored ({} dropped)", kept,
                 records.size() - kept);
  }
  return Status::OK();
}

Status CrawlLoop::RestoreControls() {
  std::vector<store::ControlRecord> records;
  Status s = store_->ForEachControl(
      [&](const store::ControlRecord& r) {
        records.push_back(r);
        return true;
      },
      /*skip_corrupt=*/true);
  if (!s.ok()) return s;
  std::vector<std::string> skipped;
  controls_->Restore(records, &skipped);
  for (const std::string& target : skipped) {
    spdlog::warn("controls: stored control on {} no longer fits; dropped",
                 target);
  }
  if (controls_->size() > 0) {
    spdlog::info("controls: {} operator controls restored", controls_->size());
  }
  ApplyControlChange({true, controls_->has_patterns()});
  return Status::OK();
}

void CrawlLoop::ApplyControlChange(OperatorControls::Change change) {
  if (change.hosts) {
    for (sched::HostId h : controls_->TakeHostsToReopen()) {
      sched_->ReopenHost(h);
    }
  }
  if (change.patterns &&
      (controls_->has_patterns() || sched_->held_pages() > 0)) {
    book_->ForEachUrl([this](sched::PageId id, std::string_view url) {
      sched_->SetHeld(id, controls_->PatternHeld(url));
    });
  }
}

Result<nlohmann::json> CrawlLoop::Control(std::string_view body) {
  auto request = controls_->Parse(body);
  if (!request.ok()) return request.status();
  auto change = controls_->Apply(*request, UnixNow());
  if (!change.ok()) return change.status();
  ApplyControlChange(*change);
  if (controls_->marked()) RequestCommit();
  TryDispatch();
  return ControlsJson();
}

nlohmann::json CrawlLoop::ControlsJson(size_t limit) const {
  nlohmann::json j = controls_->Json(limit);
  j["held_pages"] = sched_->held_pages();
  return j;
}

StatusViews::Sources CrawlLoop::StatusSources() {
  StatusViews::Sources s;
  s.controls = [this] { return ControlsJson(kStatusControlsListed); };
  s.frontier = [this] { return frontier_->Json(kStatusFrontierHostsListed); };
  s.frontier_metrics = [this](PrometheusText& out) {
    frontier_->AppendMetrics(out);
  };
  s.controls_metrics = [this](PrometheusText& out) {
    controls_->AppendMetrics(out, sched_->held_pages());
  };
  s.fetches = [this](double now) {
    return StatusViews::FetchCounts{
        observer_->fetched_total(), observer_->robots_denied_total(),
        observer_->FetchesInLastMinute(now), observer_->outcomes()};
  };
  s.signals = [this] {
    return StatusViews::SignalCounts{intake_->signals_total(),
                                     intake_->signals_stale_total(),
                                     intake_->sitemaps_fetched()};
  };
  s.site_feeds = [this] { return intake_->SiteFeedsJson(); };
  if (websub_) {
    s.websub = [this] { return websub_->Json(); };
    s.websub_metrics = [this](PrometheusText& out) {
      websub_->AppendMetrics(out);
    };
  }
  s.signal_sources = [this] { return intake_->SignalSourcesJson(); };
  s.signal_source_metrics = [this](PrometheusText& out) {
    intake_->AppendSignalSourceMetrics(out);
  };
  if (indexnow_) {
    s.indexnow = [this] { return indexnow_->Json(); };
    s.indexnow_metrics = [this](PrometheusText& out) {
      indexnow_->AppendMetrics(out);
    };
  }
  s.site_feed_metrics = [this](PrometheusText& out) {
    intake_->AppendSiteFeedMetrics(out);
  };
  s.stages = [this] {
    StatusViews::StageFigures f;
    f.in_flight = dispatcher_->in_flight();
    f.on_network = dispatcher_->on_network();
    std::copy(std::begin(dispatcher_->limits().seconds()),
              std::end(dispatcher_->limits().seconds()), f.limit_seconds);
    f.fair_share_cap = dispatcher_->fair_share().cap();
    f.fair_share_hosts = dispatcher_->fair_share().hosts_last_window();
    f.fair_share_contended = dispatcher_->fair_share().contended_last_window();
    f.fair_share_low_yield = dispatcher_->fair_share().low_yield_last_window();
    const ParseCost& parse_cost = dispatcher_->fair_share().parse_cost();
    f.parse_hosts_over_share = parse_cost.hosts_over_last_window();
    f.parse_share_max = parse_cost.max_share_last_window();
    f.parse_seconds = parse_cost.seconds_total();
    f.parse_jobs = parse_->jobs();
    f.parse_bytes = parse_->bytes();
    f.committing = committer_->running();
    f.commit_pending_bytes = committer_->pending_bytes();
    f.commit_errors = committer_->store_errors();
    f.validator_read_failures = book_->validator_read_failures();
    f.writer = writer_->stats();
    f.network_lag = net_->lag();
    f.scheduler_lag = lag_probe_.stats();
    return f;
  };
  s.host_gate = [this](sched::HostId h) {
    return StatusViews::HostGate{dispatcher_->slots().next_allowed(h),
                                 dispatcher_->slots().in_flight(h)};
  };
  s.rate_target = [this] { return config_.budget.rate; };
  s.stopping = [this] { return stopping_; };
  s.cluster = [this] {
    return cluster_ ? cluster_->ClusterJson() : nlohmann::json();
  };
  s.cluster_metrics = &ClusterAdapter::AppendMetrics;
  return s;
}

Status CrawlLoop::InitCluster() {
  if (config_.cluster.nats_url.empty()) return Status::OK();
  ClusterAdapter::Options o;
  o.cluster = config_.cluster;
  o.changes = config_.feed.enabled;
  o.max_seeds = config_.crawler.max_urls;
  o.max_per_host = static_cast<uint32_t>(
      std::min<uint64_t>(config_.crawler.max_urls_per_host, UINT32_MAX));
  ClusterAdapter::Hooks h;
  h.add_url = [this](const std::string& url, double importance, bool seed) {
    return AddUrl(url, importance, seed);
  };
  h.sitemap_signal = [this](sched::PageId page, double lastmod, double now,
                            sched::SignalSource source) {
    intake_->ConsiderDatedSignal(page, lastmod, now, source);
  };
  h.pushed_signal = [this](sched::PageId page, double now, double changed_at,
                           sched::SignalSource source) {
    intake_->SignalPage(page, now, source, changed_at);
  };
  h.commit = [this](std::function<void(Status)> committed) {
    RequestCommit(std::move(committed));
  };
  h.dispatch = [this] { TryDispatch(); };
  h.set_rate = [this](double rate) { sched_->SetRate(rate, UnixNow()); };
  h.budget = [this] { return config_.budget.rate; };
  h.pages_fetched = [this] { return observer_->fetched_total(); };
  h.fetch_rate = [this] {
    std::shared_ptr<const nlohmann::json> snapshot = views_->snapshot();
    return snapshot && (*snapshot)["rate_actual"].is_number()
               ? (*snapshot)["rate_actual"]
               : nlohmann::json();
  };
  auto adapter =
      ClusterAdapter::Create(io_, std::move(o), book_.get(), frontier_.get(),
                             sched_.get(), store_.get(), std::move(h));
  if (!adapter.ok()) return adapter.status();
  cluster_ = std::move(adapter).value();
  return Status::OK();
}

void CrawlLoop::WhenCommitted(std::function<void(Status)> committed) {
  std::shared_ptr<RouteJoin> join = std::move(route_join_);
  route_join_ = nullptr;
  if (!join) return RequestCommit(std::move(committed));
  RequestCommit([join, committed = std::move(committed)](Status s) {
    join->Then(
        [s, committed](Status routed) { committed(s.ok() ? routed : s); });
  });
}

Status CrawlLoop::LoadFetchState(fetch::CrawlerState* state) {
  Status s = book_->RestoreFetchState(*store_, &recovery_, state);
  if (!s.ok()) return s;
  // Stored in Unix seconds; the crawler runs on its steady clock.
  double delta = NetworkStage::Now() - UnixNow();
  fetch::ShiftTimes(&state->robots, delta);
  fetch::ShiftTimes(&state->hosts, delta);
  return Status::OK();
}

void CrawlLoop::SaveFetchState(std::function<void()> then) {
  if (then) fetch_state_waiters_.push_back(std::move(then));
  if (saving_fetch_state_) return;
  saving_fetch_state_ = true;
  net_->ExportTouched([this,
                       alive = alive_](fetch::CrawlerState state) mutable {
    // Network thread: only hand it over.
    boost::asio::post(io_, [this, alive, state = std::move(state)]() mutable {
      if (!*alive) return;
      saving_fetch_state_ = false;
      const double now = UnixNow();
      const double delta = now - NetworkStage::Now();
      fetch::ShiftTimes(&state.robots, delta);
      fetch::ShiftTimes(&state.hosts, delta);
      book_->RecordFetchState(state);
      last_fetch_state_save_ = now;
      RequestCommit();
      auto waiters = std::move(fetch_state_waiters_);
      fetch_state_waiters_.clear();
      for (auto& w : waiters) w();
    });
  });
}

Status CrawlLoop::AddSeed(std::string_view url, double weight) {
  auto normalized = parse::NormalizeUrl(url);
  if (!normalized.ok()) return normalized.status();
  std::string_view scheme = parse::UrlScheme(normalized.value());
  if (scheme != "http" && scheme != "https") {
    return Status::InvalidArgument("seed is not http(s): " + std::string(url));
  }
  frontier_->AddScope(normalized.value());
  // Clustered: a seed of another node's shard goes to its owner (every
  // node may be given every seed: duplicates are harmless).
  if (cluster_) {
    cluster_->KeepSeed(normalized.value(), weight);
    if (RouteAway(normalized.value(), cluster::WorkItem::Kind::kSeed, weight)) {
      return Status::OK();
    }
  }
  bool added = AddUrl(normalized.value(), weight, true).has_value();
  RequestCommit();
  if (!added) {
    return Status::ResourceExhausted(
        std::string(controls_->Blocked(normalized.value())
                        ? "seed not added (blocked by an operator control): "
                        : "seed not added (URL limits): ") +
        std::string(url));
  }
  if (started_) TryDispatch();
  return Status::OK();
}

void CrawlLoop::Observe(const sched::Observation& obs) { book_->Observe(obs); }

std::optional<sched::PageId> CrawlLoop::AddUrl(const std::string& url,
                                               double importance, bool seed) {
  return frontier_->AddUrl(url, importance, seed, UnixNow());
}

Status CrawlLoop::SetRules(const std::vector<RuleConfig>& rules) {
  if (Status s = frontier_->SetRules(rules); !s.ok()) return s;
  config_.rules = rules;
  return Status::OK();
}

void CrawlLoop::Start() {
  started_ = true;
  work_.emplace(io_.get_executor());
  lag_probe_.Start();
  writer_->Start();
  net_->Start();
  if (cluster_) cluster_->Start();
  dispatcher_->Start();
  views_->PublishSnapshot();
  Housekeeping();
  TryDispatch();
}

// ---- dispatch ----

void CrawlLoop::StartFetch(sched::PageId page) {
  const std::string url = book_->url(page);  // one read of the URL file
  intake_->NoteOrigin(page, url);
  // Held in memory, else one point read of the page's store record.
  ColdFields validators = book_->ValidatorsForDispatch(page);
  fetch::CrawlRequest req;
  req.url = url;
  req.etag = std::move(validators.etag);
  req.last_modified = std::move(validators.last_modified);
  req.keep_raw = warc_ != nullptr;
  req.defer_decoding = true;  // decoded on the parse pool
  fetch_batch_->Add(net_->Counted(
      std::move(req),
      [this, page, alive = alive_](fetch::FetchResult r, double next_allowed) {
        if (*alive) OnNetworkDone(page, std::move(r), next_allowed);
      }));
}

void CrawlLoop::OnNetworkDone(sched::PageId page, fetch::FetchResult r,
                              double next_allowed) {
  // Network thread: the hand-backs of one network turn go together
  // (HandNetworkTurn).
  done_batch_->Add(NetworkDone{page, next_allowed, std::move(r)});
}

void CrawlLoop::HandNetworkTurn(std::vector<NetworkDone>& batch) {
  // Network thread: free the hosts' slots at once (a parse must not hold
  // one), then the responses to the pool: their slots are freed on the
  // scheduler's thread before their completions can arrive there.
  // Their bytes count against the parse queue's bound from before the
  // slots are handed back, so no dispatch passes it meanwhile.
  uint64_t bytes = 0;
  for (NetworkDone& done : batch) {
    if (done.unparsed->outcome == fetch::OutcomeClass::kOk) {
      bytes += BodyBytes(*done.unparsed);
      to_parse_.emplace_back(done.page, std::move(*done.unparsed));
      done.unparsed.reset();
    }
  }
  parse_handing_bytes_ += bytes;
  (void)network_done_->PushAll(batch);
  for (auto& [page, r] : to_parse_) Parse(page, std::move(r));
  parse_handing_bytes_ -= bytes;  // counted by the parse queue now
  to_parse_.clear();
}

void CrawlLoop::Parse(sched::PageId page, fetch::FetchResult r) {
  parse::FingerprintOptions fo;
  fo.k = config_.sched.shingle_k;
  fo.m = static_cast<size_t>(config_.sched.sketch_m);
  fo.seed = store_->hash_secret();
  // Content-Encoding is undone on the pool (ParseQueue): a gzip bomb's
  // 50 MiB neither holds the network thread nor queues the other pages'
  // parses behind it; it ends too-large.
  parse_->Submit(
      std::move(r), config_.fetch.max_decompressed_bytes,
      [this, fo, alive = alive_](const fetch::FetchResult& r) {
        Parsed parsed;
        if (r.outcome == fetch::OutcomeClass::kOk && IsHtml(r.content_type)) {
          if (*alive && parse_hook_) parse_hook_();
          parsed.fingerprint =
              parse::FingerprintHtml(r.body, r.content_type, r.final_url, fo);
        }
        // Any other body is hashed whole, here too: a large one must not
        // hold the scheduler's thread.
        parsed.text_hash = r.outcome != fetch::OutcomeClass::kOk ? 0
                           : parsed.fingerprint && parsed.fingerprint->ok()
                               ? parsed.fingerprint->value().text.text_hash
                               : parse::TextHash(r.body, fo.seed);
        return parsed;
      },
      [this, page](fetch::FetchResult r, Parsed parsed) {
        Complete(page, std::move(r), std::move(parsed));
      });
}

void CrawlLoop::OnNetworkBatch(std::vector<NetworkDone>& batch) {
  if (!*alive_) return;
  // Slots full since the last pass: the dispatcher tells who held them
  // (the network, or this thread, late to take what ended) from the slots
  // as this thread finds them, before the batch frees them.
  if (dispatcher_->limits().last() == Limit::kNetwork) TryDispatch();
  for (NetworkDone& done : batch) {
    dispatcher_->NetworkDone(done.page, done.next_allowed);
    if (done.unparsed) {
      Complete(done.page, std::move(*done.unparsed), Parsed{});
    }
  }
  DispatchSoon();
}

void CrawlLoop::DispatchSoon() {
  if (dispatch_posted_) return;
  dispatch_posted_ = true;
  boost::asio::post(io_, [this, alive = alive_] {
    if (!*alive) return;
    dispatch_posted_ = false;
    TryDispatch();
  });
}

void CrawlLoop::Complete(sched::PageId page, fetch::FetchResult r,
                         Parsed parsed) {
  const double now = UnixNow();
  dispatcher_->NoteOutcome(page, r.outcome);
  const double started_unix = dispatcher_->Finish(page, NetworkStage::Now());
  views_->NoteFetch(page, r, now);
  if (spdlog::should_log(spdlog::level::debug)) {  // the URL is a read
    spdlog::debug("fetch {} -> {} {} {} bytes {:.0f} ms{}{}", book_->url(page),
                  fetch::OutcomeName(r.outcome), r.status, r.bytes,
                  r.total_elapsed_s * 1000, r.detail.empty() ? "" : ": ",
                  r.detail);
  }
  observer_->Observe(page, std::move(r), std::move(parsed), started_unix, now);
  RequestCommit();  // one commit for the completions queued together
  DispatchSoon();
}

void CrawlLoop::ArchiveOnly(fetch::FetchResult r, double started_unix) {
  if (stopping_) return;
  if (committer_->AddWarc(std::move(r), started_unix)) RequestCommit();
}

void CrawlLoop::RequestCommit(std::function<void(Status)> committed) {
  committer_->Request(std::move(committed));
}

// ---- housekeeping: robots refresh, fetch state, snapshot ----

void CrawlLoop::Housekeeping() {
  if (stopping_) return;
  const double now = UnixNow();
  intake_->RefreshRobots(now, config_.budget.rate, kHousekeepingS);
  if (config_.site_feeds.enabled) intake_->PollSiteFeeds(now);
  if (websub_) websub_->Tick();
  if (now - last_fetch_state_save_ >=
      std::max(config_.store.sync_interval_s, kHousekeepingS)) {
    SaveFetchState({});
  }
  views_->Tick(now);               // sliced passes, snapshot, operator's tick
  if (cluster_) cluster_->Tick();  // λ, share, summary to the heartbeat
  housekeeping_.expires_after(
      std::chrono::milliseconds(static_cast<int>(kHousekeepingS * 1000)));
  housekeeping_.async_wait(
      [this, alive = alive_](boost::system::error_code ec) {
        if (!ec && *alive) Housekeeping();
      });
}

// ---- POST /signal ----

nlohmann::json CrawlLoop::Signal(const std::vector<std::string>& urls,
                                 double changed_at,
                                 std::function<void(Status)> committed,
                                 sched::SignalSource source) {
  const double now = UnixNow();
  uint64_t signals = 0, stale = 0, added = 0, ignored = 0, routed = 0;
  std::shared_ptr<RouteJoin> join;
  if (cluster_) join = std::make_shared<RouteJoin>();
  for (const auto& raw : urls) {
    auto normalized = parse::NormalizeUrl(raw);
    if (!normalized.ok()) {
      ++ignored;
      continue;
    }
    // The owner counts it under its source (IndexNow, /signal).
    if (RouteAway(normalized.value(), cluster::WorkItem::Kind::kSignal,
                  changed_at, join, source)) {
      ++routed;
      continue;
    }
    if (auto page = book_->Find(normalized.value())) {
      if (intake_->SignalPage(*page, now, source, changed_at)) {
        ++signals;
      } else {
        ++stale;
      }
    } else if (AddUrl(normalized.value(), 1.0, false)) {
      ++added;
    } else {
      ++ignored;
    }
  }
  // The hints routed to other nodes count once stored in the work stream.
  if (join && join->pending > 0) route_join_ = join;
  if (committed)
    WhenCommitted(std::move(committed));
  else
    RequestCommit();
  TryDispatch();
  nlohmann::json out = {{"signals", signals},
                        {"stale", stale},
                        {"added", added},
                        {"ignored", ignored}};
  if (cluster_) out["routed"] = routed;  // to the owners of their hosts
  return out;
}

void CrawlLoop::SetRate(double pages_per_second) {
  config_.budget.rate = pages_per_second;
  sched_->SetRate(RateShare(), UnixNow());
  TryDispatch();
}

// ---- stop ----

void CrawlLoop::Stop(double grace_s, std::function<void(Status)> done) {
  stopping_ = true;
  if (cluster_) cluster_->BeginStop();
  if (!work_) work_.emplace(io_.get_executor());
  dispatcher_->Stop();
  intake_->Stop();
  housekeeping_.cancel();
  lag_probe_.Stop();
  const double deadline = UnixNow() + grace_s;
  auto finish = std::make_shared<std::function<void()>>();
  auto timer = std::make_shared<boost::asio::steady_timer>(io_);
  *finish = [this, deadline, done, finish, timer, alive = alive_] {
    if (!*alive) return;
    if (dispatcher_->in_flight() > 0 && UnixNow() < deadline) {
      timer->expires_after(std::chrono::milliseconds(20));
      timer->async_wait([finish](boost::system::error_code) { (*finish)(); });
      return;
    }
    // The fetch state from the network thread, then one last commit, then
    // the stages down in order: nothing is dropped that was acknowledged.
    SaveFetchState([this, done, finish, alive] {
      if (!*alive) return;
      RequestCommit([this, done, finish, alive](Status committed) {
        if (!*alive) return;
        net_->Stop();
        parse_->Join();
        Status s = writer_->Stop();
        if (s.ok() && !committed.ok()) s = committed;
        if (warc_) {
          Status w = warc_->Close();
          if (s.ok()) s = w;
        }
        // Nothing of ours is in flight: leave the cluster, so the others
        // take our shards (after their handoff delay).
        if (cluster_) cluster_->StopAll();
        auto callback = done;
        *finish = nullptr;  // breaks the self-reference
        work_.reset();
        callback(s);
      });
    });
  };
  (*finish)();
}

}  // namespace freshd::daemon

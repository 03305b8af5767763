#include "daemon/crawl_loop.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "base/clock.h"
#include "base/sketch.h"
#include "daemon/fetch_state.h"
#include "daemon/scheduler_options.h"
#include "fetch/deferred_body.h"
#include "parse/html_fingerprint.h"
#include "parse/http_date.h"
#include "parse/public_suffix.h"
#include "parse/shingle.h"
#include "parse/sitemap.h"
#include "parse/url.h"
#include "spdlog/spdlog.h"
#include "store/cdxj.h"

namespace freshd::daemon {
namespace {

// On a `pool` thread: decodes a slice of `job`, then runs `then` there once
// it is decoded, else posts the rest to `pool` (other jobs run between the
// slices).
void DecodeThen(boost::asio::thread_pool& pool,
                std::shared_ptr<fetch::DeferredBodyDecoder> job,
                std::function<void()> then) {
  if (job->Step(fetch::kDecodeSliceBytes)) return then();
  boost::asio::post(
      pool, [&pool, job = std::move(job), then = std::move(then)]() mutable {
        DecodeThen(pool, std::move(job), std::move(then));
      });
}

// A fetch that says the page is no longer there (the change feed's "gone").
bool IsGone(int32_t status, std::string_view outcome) {
  return outcome == "4xx" && (status == 404 || status == 410);
}

constexpr int kMaxSitemapDepth = 1;  // an index, then its children
// Dispatches per turn of the scheduler's thread before it yields to the
// completions queued behind (it goes on right after them).
constexpr int kMaxDispatchPerTurn = 256;
// Housekeeping: robots refresh, fetch-state saves, the status snapshot.
constexpr double kHousekeepingS = 0.25;
// With no token due and no host reopening known, the dispatcher still looks
// again this often (pages leave their back-off or min_interval).
constexpr double kIdleRecheckS = 0.25;
constexpr double kLimitHalfLifeS = 10;

bool IsHtml(const std::string& type) {
  return type == "text/html" || type == "application/xhtml+xml";
}

// "Sat, 21 Nov 2026 19:40:00 GMT" -> Unix seconds, or -1.
double HttpDateOrMinus1(std::string_view value) {
  return parse::ParseHttpDate(value).value_or(-1);
}

sched::FailureClass ToFailure(const fetch::FetchResult& r) {
  using O = fetch::OutcomeClass;
  using F = sched::FailureClass;
  switch (r.outcome) {
    case O::kHttp4xx:
      return r.status == 429 ? F::kHttp5xx : F::kHttp4xx;
    case O::kHttp5xx:
      return F::kHttp5xx;
    case O::kDns:
      return F::kDns;
    case O::kTls:
      return F::kTls;
    case O::kTimeout:
      return F::kTimeout;
    case O::kProtocol:  // the host speaks no HTTP: back off like a transport
      return F::kNetwork;
    case O::kTooLarge:
      return F::kTooLarge;
    case O::kRobotsDenied:
      return F::kRobotsDenied;
    case O::kRedirectLoop:
    case O::kBadRedirect:
      return F::kRedirectLoop;
    case O::kBadContentType:
    case O::kBadUrl:
    case O::kBlockedAddress:
      return F::kHttp4xx;  // permanent for this URL: the long back-off
    default:
      return F::kNetwork;
  }
}

uint64_t BodyBytes(const fetch::FetchResult& r) {
  return r.body.size() + r.raw_body.size() + r.raw_headers.size();
}

}  // namespace

const char* LimitName(Limit limit) {
  switch (limit) {
    case Limit::kNetwork:
      return "network";
    case Limit::kPoliteness:
      return "politeness";
    case Limit::kParse:
      return "parse";
    case Limit::kWrite:
      return "write";
    case Limit::kBudget:
      return "budget";
    case Limit::kIdle:
      return "idle";
    case Limit::kScheduler:
      return "scheduler";
    case Limit::kNone:
      break;
  }
  return "none";
}

Limit LimitedBy(const double (&seconds)[kLimits], double rate_actual,
                double rate_target) {
  Limit limited_by = Limit::kNone;
  double most = 0;
  for (int i = 1; i < kLimits; ++i) {
    if (seconds[i] > most) {
      most = seconds[i];
      limited_by = static_cast<Limit>(i);
    }
  }
  if ((limited_by == Limit::kPoliteness || limited_by == Limit::kIdle) &&
      rate_target > 0 && rate_actual >= kBudgetReachedShare * rate_target) {
    return Limit::kBudget;
  }
  return limited_by;
}

CrawlLoop::CrawlLoop(boost::asio::io_context& io, const Config& config)
    : io_(io),
      config_(config),
      wake_(io),
      housekeeping_(io),
      lag_probe_(io),
      slots_(config.politeness.max_in_flight_per_host) {
  // Every outcome class is counted from zero, so /metrics shows each from
  // the start (a rate() over a series that appears late misses its first).
  for (int c = 0; c <= static_cast<int>(fetch::OutcomeClass::kProtocol); ++c) {
    outcomes_.emplace(
        std::string(fetch::OutcomeName(static_cast<fetch::OutcomeClass>(c))),
        0);
  }
}

CrawlLoop::~CrawlLoop() {
  *alive_ = false;
  if (router_) router_->Stop();
  if (cluster_) cluster_->Stop();
  if (parse_pool_) {  // queued parses are dropped, a running one finishes
    parse_pool_->stop();
    parse_pool_->join();
  }
  if (net_) net_->Stop();  // no callback after this
  if (writer_) (void)writer_->Stop();
  // What was marked and never handed to the writer (a loop destroyed
  // without Stop): committed here, so nothing acknowledged is lost.
  if (book_ && store_ && book_->marked()) {
    store::StoreBatch batch;
    book_->TakeBatch(&batch);
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
  last_limit_at_ = started_unix_;
  auto scope = UrlScope::Create(config_.crawler);
  if (!scope.ok()) return scope.status();
  scope_.emplace(std::move(scope).value());
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned parse_threads =
      config_.engine.parse_threads > 0
          ? static_cast<unsigned>(config_.engine.parse_threads)
          : cores;
  parse_pool_ = std::make_unique<boost::asio::thread_pool>(parse_threads);

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
  // The URLs go straight into the book (no transient string per page: at
  // 1M pages those left ~200 B/page of freed heap resident), and the scope
  // and origins are noted as they pass (no read of the URL file per page).
  RecoveryOptions options;
  options.progress = progress_;
  options.clock = UnixNow;  // the scheduler's clock (TryDispatch's now)
  book_->ReserveUrls(store_->page_count());
  auto report = RebuildScheduler(
      *store_, sched_.get(), &book_->hosts(),
      [this](sched::PageId id, std::string_view url) {
        book_->RestoreUrl(url);
        AddScope(url);
        if (sched_->page(id).fetched()) NoteOrigin(id, url);
      },
      options);
  if (!report.ok()) return report.status();
  recovery_ = std::move(report).value();
  book_->FinishRestore(std::move(recovery_.metas));
  recovery_.metas = {};
  if (Status r = SetRules(config_.rules); !r.ok()) return r;

  auto net = NetworkStage::Create(config_);
  if (!net.ok()) return net.status();
  net_ = std::move(net).value();
  fetch::CrawlerState state;
  if (Status st = LoadFetchState(&state); !st.ok()) return st;
  if (book_->size() > 0) {
    // A restart: a host contacted after the last save (SIGKILL) must still
    // get its min_delay, so no host is contacted before it has passed.
    state.hold_all_until = NetworkStage::Now() + config_.politeness.min_delay_s;
  }
  net_->ImportState(state);
  fetch_state_restored_ = {state.robots.size(), state.hosts.size()};
  last_fetch_state_save_ = started_unix_;
  net_->set_sitemap_handler(
      [this, alive = alive_](const std::string& origin,
                             const std::vector<std::string>& sitemaps) {
        // On the network thread: hand the list to the scheduler's thread.
        boost::asio::post(io_, [this, alive, origin, sitemaps] {
          if (*alive) OnSitemaps(origin, sitemaps);
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
  if (router_) {  // each page's record to the page stream, once committed
    writer_->set_committed_hook(
        [this](const std::vector<CommittedPage>& pages) {
          PublishPages(pages);
        });
  }
  if (Status c = InitChangePublisher(); !c.ok()) return c;
  if (changes_) {  // each change event to the change stream, once committed
    writer_->set_feed_hook(
        [this](const std::vector<store::FeedEvent>& e) { PublishChanges(e); });
  }
  return Status::OK();
}

Status CrawlLoop::LoadFetchState(fetch::CrawlerState* state) {
  Status s = store_->ForEachHost(
      [&](const store::HostRecord& h) {
        if (h.fetch_state.empty()) return true;
        auto decoded = DecodeHostFetchState(h.fetch_state);
        if (!decoded.ok()) {  // reported; the host starts afresh
          ++recovery_.corrupt;
          if (recovery_.corrupt_records.size() < 1000) {
            recovery_.corrupt_records.push_back(
                {"host " + h.host + " fetch_state",
                 decoded.status().message()});
          }
          return true;
        }
        if (auto id = book_->hosts().Find(h.host)) {
          book_->RestoreHostFetchState(*id, h.fetch_state);
        }
        if (decoded.value().gate) {
          state->hosts.push_back(*decoded.value().gate);
        }
        for (auto& r : decoded.value().robots) state->robots.push_back(r);
        return true;
      },
      nullptr, /*skip_corrupt=*/true);
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
      for (auto& [name, host_state] : GroupByHost(state)) {
        std::optional<sched::HostId> id = book_->hosts().Find(name);
        if (!id) continue;  // a host with no pages (e.g. only redirected to)
        book_->SetHostFetchState(*id, EncodeHostFetchState(host_state));
      }
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
  AddScope(normalized.value());
  // Clustered: a seed of another node's shard goes to its owner (every
  // node may be given every seed: duplicates are harmless).
  if (cluster_) {
    if (cluster_seeds_.size() < config_.crawler.max_urls) {
      cluster_seeds_.emplace_back(normalized.value(), weight);
    }
    if (RouteAway(normalized.value(), cluster::WorkItem::Kind::kSeed, weight)) {
      return Status::OK();
    }
  }
  bool added = AddUrl(normalized.value(), weight, true).has_value();
  RequestCommit();
  if (!added) {
    return Status::ResourceExhausted("seed not added (URL limits): " +
                                     std::string(url));
  }
  if (started_) TryDispatch();
  return Status::OK();
}

void CrawlLoop::AddScope(std::string_view normalized_url) {
  scope_->Add(normalized_url);
}

bool CrawlLoop::InScope(const std::string& url) const {
  return scope_->Contains(url);
}

void CrawlLoop::Observe(const sched::Observation& obs) {
  book_->Note(obs.page, sched_->Observe(obs));
}

std::optional<sched::PageId> CrawlLoop::AddUrl(const std::string& url,
                                               double importance, bool seed) {
  std::optional<sched::PageId> known = book_->Find(url);
  if (known) {
    if (seed) {
      Observe(
          {*known, UnixNow(),
           sched::DiscoveredObs{importance, sched::DiscoverySource::kSeed}});
    }
    return known;
  }
  if (!seed && !InScope(url)) return std::nullopt;
  auto host = book_->hosts().Intern(parse::UrlAuthority(url));
  if (!host.ok()) return std::nullopt;
  auto id = book_->Add(url, host.value(), importance,
                       static_cast<uint32_t>(std::min<uint64_t>(
                           config_.crawler.max_urls_per_host, UINT32_MAX)));
  if (!id.ok()) return std::nullopt;
  ApplyRule(id.value());
  return id.value();
}

Status CrawlLoop::SetRules(const std::vector<RuleConfig>& rules) {
  auto matcher = RuleMatcher::Create(rules);
  if (!matcher.ok()) return matcher.status();
  std::vector<sched::PageRule> table;
  for (const RuleConfig& r : rules) {
    table.push_back({r.min_interval_s, r.max_interval_s, r.importance});
  }
  if (Status s = sched_->SetRules(std::move(table)); !s.ok()) return s;
  rules_ = std::move(matcher).value();
  config_.rules = rules;
  // Every page is matched again (its rule's index may name another rule
  // now); without rules before or after, nothing is. The URLs are read in
  // one sequential pass of the URL file.
  if (rules_.empty()) {
    for (sched::PageId id = 0; id < book_->size(); ++id) {
      if (sched_->RuleOf(id) != 0) (void)sched_->SetPageRule(id, 0);
    }
  } else {
    book_->ForEachUrl(
        [this](sched::PageId id, std::string_view url) { ApplyRule(id, url); });
  }
  return Status::OK();
}

void CrawlLoop::ApplyRule(sched::PageId page) {
  if (rules_.empty() && sched_->RuleOf(page) == 0) return;
  ApplyRule(page, book_->url(page));
}

void CrawlLoop::ApplyRule(sched::PageId page, std::string_view url) {
  if (rules_.empty() && sched_->RuleOf(page) == 0) return;
  const size_t rule = rules_.Match(url, parse::UrlHost(url));
  // (Cannot fail: the page is known, the rule within the table.)
  (void)sched_->SetPageRule(page, static_cast<uint8_t>(rule));
}

void CrawlLoop::Start() {
  started_ = true;
  work_.emplace(io_.get_executor());
  lag_probe_.Start();
  writer_->Start();
  net_->Start();
  if (cluster_) cluster_->Start();
  if (router_) router_->Start();
  if (changes_) changes_->Start();
  PublishSnapshot();
  Housekeeping();
  TryDispatch();
}

// ---- dispatch ----

void CrawlLoop::NoteLimit(Limit limit, double now) {
  const double dt = std::max(0.0, now - last_limit_at_);
  const double decay = std::exp2(-dt / kLimitHalfLifeS);
  for (double& s : limit_seconds_) s *= decay;
  limit_seconds_[static_cast<int>(last_limit_)] += dt;
  last_limit_ = limit;
  last_limit_at_ = now;
}

uint64_t CrawlLoop::QueuedBytes() const {
  return parse_bytes_->load() + pending_warc_bytes_;
}

// A slot is freed on this thread (ReleaseSlot), so a fetch the network
// thread has ended holds one until this thread catches up: full slots, most
// of them held so, are this thread's limit, not the network's.
Limit CrawlLoop::SlotsFullLimit() const {
  const uint64_t fetching = std::min<uint64_t>(net_->pending(), on_network_);
  return on_network_ > 0 && (on_network_ - fetching) * 2 >= on_network_
             ? Limit::kScheduler
             : Limit::kNetwork;
}

void CrawlLoop::TryDispatch() {
  if (!started_ || stopping_) return;
  // The time since the slots were found full goes to whoever held them up:
  // it is known only now, when this thread runs again.
  if (last_limit_ == Limit::kNetwork) last_limit_ = SlotsFullLimit();
  const double now = UnixNow();
  const double gate_now = NetworkStage::Now();
  const size_t max_connections =
      static_cast<size_t>(config_.fetch.max_connections);
  const uint64_t writer_bytes = writer_->stats().queued_bytes;
  Limit limit = Limit::kNone;
  int dispatched = 0;
  bool host_closed = false;  // did politeness turn a candidate away?
  auto host_open = [&](sched::HostId h) {
    if (cluster_ && !OwnsHost(h)) return false;  // another node's host
    const bool open = slots_.Open(h, gate_now);
    host_closed = host_closed || !open;
    return open;
  };
  for (;;) {
    if (on_network_ >= max_connections) {
      limit = SlotsFullLimit();
      break;
    }
    if (parse_bytes_->load() > config_.engine.queue_bytes / 2) {
      limit = Limit::kParse;
      break;
    }
    if (pending_warc_bytes_ + writer_bytes > config_.engine.queue_bytes / 2) {
      limit = Limit::kWrite;
      break;
    }
    if (dispatched >= kMaxDispatchPerTurn) {
      // Let the completions queued behind run, then go on.
      boost::asio::post(io_, [this, alive = alive_] {
        if (*alive) TryDispatch();
      });
      NoteLimit(Limit::kNone, now);
      return;
    }
    std::optional<sched::PageId> page = sched_->Select(now, host_open);
    if (!page) {
      limit = sched_->NextTokenTime(now) > now ? Limit::kBudget
              : host_closed                    ? Limit::kPoliteness
                                               : Limit::kIdle;
      break;
    }
    Dispatch(*page, now);
    ++dispatched;
  }
  NoteLimit(limit, now);
  // Wake-ups besides completions: the next token, the next host reopening;
  // and a periodic look for pages leaving their back-off.
  double at = now + kIdleRecheckS;
  if (limit == Limit::kBudget) at = std::min(at, sched_->NextTokenTime(now));
  const double opening = slots_.NextOpening(gate_now);
  if (std::isfinite(opening)) at = std::min(at, now + (opening - gate_now));
  WakeAt(at);
}

void CrawlLoop::WakeAt(double unix_time) {
  const double now = UnixNow();
  // An earlier wake-up already armed covers this one.
  if (wake_at_ > now && wake_at_ <= unix_time) return;
  wake_at_ = unix_time;
  wake_.expires_after(std::chrono::microseconds(
      static_cast<int64_t>(std::clamp(unix_time - now, 0.0, 1.0) * 1e6)));
  wake_.async_wait([this, alive = alive_](boost::system::error_code ec) {
    if (ec || !*alive) return;
    wake_at_ = std::numeric_limits<double>::infinity();
    TryDispatch();
  });
}

void CrawlLoop::Dispatch(sched::PageId page, double now) {
  const std::string url = book_->url(page);  // one read of the URL file
  NoteOrigin(page, url);
  const sched::HostId host = sched_->page(page).host;
  in_flight_[page] = InFlight{now, host, true};
  ++on_network_;
  ++dispatched_total_;
  slots_.Start(host);
  const PageMeta& meta = book_->meta(page);
  fetch::CrawlRequest req;
  req.url = url;
  req.etag = std::string(meta.etag());
  req.last_modified = std::string(meta.last_modified());
  req.keep_raw = warc_ != nullptr;
  req.defer_decoding = true;  // decoded on the parse pool
  net_->Fetch(std::move(req), [this, page, alive = alive_](
                                  fetch::FetchResult r, double next_allowed) {
    if (*alive) OnNetworkDone(page, std::move(r), next_allowed);
  });
}

void CrawlLoop::OnNetworkDone(sched::PageId page, fetch::FetchResult r,
                              double next_allowed) {
  // Network thread: free the host's slot at once (the parse must not hold
  // it), then parse on the pool or complete on the scheduler's thread.
  boost::asio::post(io_, [this, page, next_allowed, alive = alive_] {
    if (*alive) ReleaseSlot(page, next_allowed);
  });
  if (r.outcome != fetch::OutcomeClass::kOk) {
    boost::asio::post(io_,
                      [this, page, r = std::move(r), alive = alive_]() mutable {
                        if (*alive) Complete(page, std::move(r), Parsed{});
                      });
    return;
  }
  parse::FingerprintOptions fo;
  fo.k = config_.sched.shingle_k;
  fo.m = static_cast<size_t>(config_.sched.sketch_m);
  fo.seed = store_->hash_secret();
  const uint64_t bytes = BodyBytes(r);
  *parse_bytes_ += bytes;
  ++*parse_jobs_;
  // Content-Encoding is undone on the pool, not on the network thread, a
  // slice per pool turn: a gzip bomb's 50 MiB neither holds the network
  // thread nor queues the other pages' parses behind it; it ends too-large.
  auto job = std::make_shared<fetch::DeferredBodyDecoder>(
      std::move(r), config_.fetch.max_decompressed_bytes);
  auto work = [this, page, fo, bytes, job, alive = alive_,
               parse_bytes = parse_bytes_, parse_jobs = parse_jobs_] {
    fetch::FetchResult& r = job->result();
    Parsed parsed;
    if (r.outcome == fetch::OutcomeClass::kOk && IsHtml(r.content_type)) {
      if (*alive && parse_hook_) parse_hook_();
      parsed.fingerprint =
          parse::FingerprintHtml(r.body, r.content_type, r.final_url, fo);
    }
    // Any other body is hashed whole, here too: a large one must not hold
    // the scheduler's thread.
    parsed.text_hash = r.outcome != fetch::OutcomeClass::kOk ? 0
                       : parsed.fingerprint && parsed.fingerprint->ok()
                           ? parsed.fingerprint->value().text.text_hash
                           : parse::TextHash(r.body, fo.seed);
    *parse_bytes -= bytes;
    --*parse_jobs;
    // Back to the scheduler's thread (io_ outlives this loop, whose
    // destructor joins the pool; a completion after it sees !*alive).
    boost::asio::post(io_, [this, page, r = std::move(r),
                            parsed = std::move(parsed), alive]() mutable {
      if (*alive) Complete(page, std::move(r), std::move(parsed));
    });
  };
  boost::asio::post(*parse_pool_, [pool = parse_pool_.get(), job,
                                   work = std::move(work)]() mutable {
    DecodeThen(*pool, std::move(job), std::move(work));
  });
}

void CrawlLoop::ReleaseSlot(sched::PageId page, double next_allowed) {
  auto it = in_flight_.find(page);
  if (it != in_flight_.end() && it->second.on_network) {
    it->second.on_network = false;
    --on_network_;
    slots_.Finish(it->second.host, next_allowed);
  }
  TryDispatch();
}

void CrawlLoop::Complete(sched::PageId page, fetch::FetchResult r,
                         Parsed parsed) {
  const double now = UnixNow();
  auto node = in_flight_.extract(page);
  InFlight f = node.empty() ? InFlight{} : node.mapped();
  if (!node.empty() && f.on_network) {  // the slot's release is behind us
    --on_network_;
    slots_.Finish(f.host, NetworkStage::Now());
  }
  CountOutcome(fetch::OutcomeName(r.outcome));
  NoteFetch(page, r, now);
  if (spdlog::should_log(spdlog::level::debug)) {  // the URL is a read
    spdlog::debug("fetch {} -> {} {} {} bytes {:.0f} ms{}{}", book_->url(page),
                  fetch::OutcomeName(r.outcome), r.status, r.bytes,
                  r.total_elapsed_s * 1000, r.detail.empty() ? "" : ": ",
                  r.detail);
  }
  PageMeta& meta = book_->meta(page);
  // The change feed's view, before this fetch updates the page.
  const bool was_gone = IsGone(meta.last_status, meta.last_outcome());
  const bool had_content =
      meta.last_fetch_time != 0 && !was_gone &&
      (meta.last_outcome() == "ok" || meta.last_outcome() == "not-modified");
  const bool after_signal = sched_->page(page).signals > 0;
  std::optional<FeedItem> event;
  auto feed = [&](const char* kind) {
    event.emplace();
    event->event.url = book_->url(page);
    event->event.time = now;
    event->event.kind = kind;
    event->event.status = r.status;
    event->url_key = parse::UrlKey(event->event.url);
  };
  meta.last_status = r.status;
  meta.set_last_outcome(fetch::OutcomeName(r.outcome));
  book_->MarkPage(page);

  if (r.outcome == fetch::OutcomeClass::kOk) {
    ++fetched_total_;
    recent_fetches_.push_back(now);
    const bool first = meta.last_fetch_time == 0;
    sched::FetchedObs obs;
    const uint64_t hash = parsed.text_hash;
    const parse::PageFingerprint* fingerprint = nullptr;
    if (parsed.fingerprint && parsed.fingerprint->ok()) {
      fingerprint = &parsed.fingerprint->value();
      obs.sketch = fingerprint->text.sketch;
    }
    obs.changed = !first && hash != meta.content_hash;
    if (first || was_gone || obs.changed) {
      feed(first || was_gone ? "new" : "changed");
      event->event.text_hash = hash;
      if (fingerprint != nullptr) {
        event->sketch = EncodeSketch(fingerprint->text.sketch);
      }
    } else if (after_signal) {
      feed("unchanged");
      event->event.text_hash = hash;
      event->event.staleness = 0;
    }
    obs.last_modified = HttpDateOrMinus1(r.last_modified);
    obs.previous_last_modified = HttpDateOrMinus1(meta.last_modified());
    meta.content_hash = hash;
    meta.set_etag(r.etag);
    meta.set_last_modified(r.last_modified);
    meta.last_fetch_time = now;
    Observe({page, now, std::move(obs)});
    // Last: adding pages grows the book (`meta` is not used after this).
    if (fingerprint != nullptr && !fingerprint->page.nofollow) {
      const sched::HostId host = sched_->page(page).host;
      for (const auto& link : fingerprint->page.links) {
        if (link.kind == parse::LinkKind::kFeed) {
          if (config_.site_feeds.enabled) NoteSiteFeed(link.url, host);
          continue;
        }
        if (link.kind != parse::LinkKind::kAnchor || link.nofollow) continue;
        if (!RouteAway(link.url, cluster::WorkItem::Kind::kLink, 1.0)) {
          AddUrl(link.url, 1.0, false);
        }
      }
    }
  } else if (r.outcome == fetch::OutcomeClass::kNotModified) {
    ++fetched_total_;
    recent_fetches_.push_back(now);
    if (!r.etag.empty()) meta.set_etag(r.etag);
    if (!r.last_modified.empty()) meta.set_last_modified(r.last_modified);
    meta.last_fetch_time = now;
    if (after_signal && !was_gone) {
      feed("unchanged");
      event->event.text_hash = meta.content_hash;
      event->event.staleness = 0;
    }
    Observe({page, now, sched::NotModifiedObs{}});
  } else {
    if (had_content && IsGone(r.status, meta.last_outcome())) {
      feed("gone");
      event->event.text_hash = meta.content_hash;
    }
    if (r.outcome == fetch::OutcomeClass::kRobotsDenied) ++robots_denied_total_;
    Observe({page, now, sched::FailedObs{ToFailure(r)}});
  }
  if (warc_ && (!r.raw_headers.empty() || !r.redirect_hops.empty())) {
    pending_warc_bytes_ += r.raw_body.size() + r.raw_headers.size();
    for (const fetch::RawHop& h : r.redirect_hops) {
      pending_warc_bytes_ += h.raw_body.size() + h.raw_headers.size();
    }
    r.body.clear();  // the writer needs the raw bytes only
    r.body.shrink_to_fit();
    if (event) event->warc_item = static_cast<int>(pending_warc_.size());
    pending_warc_.push_back(WarcItem{std::move(r), f.started_unix});
  }
  if (event && config_.feed.enabled) pending_feed_.push_back(std::move(*event));
  RequestCommit();
  TryDispatch();
}

void CrawlLoop::ArchiveOnly(fetch::FetchResult r, double started_unix) {
  if (!warc_ || stopping_) return;
  pending_warc_bytes_ += r.raw_body.size() + r.raw_headers.size();
  for (const fetch::RawHop& h : r.redirect_hops) {
    pending_warc_bytes_ += h.raw_body.size() + h.raw_headers.size();
  }
  r.body.clear();
  pending_warc_.push_back(WarcItem{std::move(r), started_unix});
  RequestCommit();
}

// ---- group commit ----

void CrawlLoop::RequestCommit(std::function<void(Status)> committed) {
  if (committed) commit_waiters_.push_back(std::move(committed));
  if (commit_running_ || commit_posted_) return;
  // After whatever else is queued on this thread: completions that arrived
  // together go into one batch.
  commit_posted_ = true;
  boost::asio::post(io_, [this, alive = alive_] {
    if (!*alive) return;
    commit_posted_ = false;
    Flush();
  });
}

void CrawlLoop::Flush() {
  if (commit_running_) return;
  if (!book_->marked() && pending_warc_.empty() && commit_waiters_.empty()) {
    return;
  }
  WriterJob job;
  uint64_t failures = 0;
  book_->TakeBatch(&job.batch, &failures);
  if (failures > 0) {
    store_errors_ += failures;
    spdlog::error("store: {} records over the store's limits not written",
                  failures);
  }
  job.warc = std::move(pending_warc_);
  pending_warc_.clear();
  job.feed = std::move(pending_feed_);
  pending_feed_.clear();
  pending_warc_bytes_ = 0;
  commit_running_ = true;
  job.done = [this, alive = alive_,
              waiters = std::move(commit_waiters_)](Status s) mutable {
    // Writer thread: report back to the scheduler's thread.
    boost::asio::post(io_, [this, alive, s, waiters = std::move(waiters)]() {
      if (*alive) OnCommitted(s, std::move(waiters));
    });
  };
  commit_waiters_.clear();
  writer_->Submit(std::move(job));
}

void CrawlLoop::OnCommitted(Status status,
                            std::vector<std::function<void(Status)>> waiters) {
  commit_running_ = false;
  if (!status.ok()) ++store_errors_;
  for (auto& w : waiters) w(status);
  // What arrived while the writer worked goes next, as one batch.
  if (book_->marked() || !pending_warc_.empty() || !commit_waiters_.empty()) {
    Flush();
  }
  TryDispatch();  // room in the write queue again
}

// ---- housekeeping: robots refresh, fetch state, snapshot ----

void CrawlLoop::Housekeeping() {
  if (stopping_) return;
  const double now = UnixNow();
  if (now >= next_robots_refresh_) RefreshRobots(now);
  if (config_.site_feeds.enabled) PollSiteFeeds(now);
  if (now - last_fetch_state_save_ >=
      std::max(config_.store.sync_interval_s, kHousekeepingS)) {
    SaveFetchState({});
  }
  AdvanceStatusPasses(now);
  PublishSnapshot();
  OperatorTick(now);
  if (cluster_) {
    cluster_->SetFigures(ClusterLambda(), RateShare());
    cluster_->SetSummary(ClusterSummary());
  }
  housekeeping_.expires_after(
      std::chrono::milliseconds(static_cast<int>(kHousekeepingS * 1000)));
  housekeeping_.async_wait(
      [this, alive = alive_](boost::system::error_code ec) {
        if (!ec && *alive) Housekeeping();
      });
}

void CrawlLoop::RefreshRobots(double now) {
  const size_t slice =
      std::max(kMinRobotsRefreshSlice,
               static_cast<size_t>(config_.budget.rate * kHousekeepingS / 4));
  std::vector<std::string> origins;
  size_t h = robots_refresh_cursor_;
  for (; h < host_origins_.size() && origins.size() < slice; ++h) {
    if (!host_origins_[h].empty() &&
        (!cluster_ || OwnsHost(static_cast<sched::HostId>(h)))) {
      origins.push_back(host_origins_[h]);
    }
  }
  if (!origins.empty()) net_->RefreshRobots(std::move(origins));
  robots_refresh_cursor_ = h;
  if (h < host_origins_.size()) return;  // the sweep goes on next turn
  robots_refresh_cursor_ = 0;
  const double period = std::clamp(config_.politeness.robots_cache_s / 4,
                                   kMinRobotsRefreshS, kMaxRobotsRefreshS);
  next_robots_refresh_ = now + period;
}

void CrawlLoop::NoteOrigin(sched::PageId page, std::string_view url) {
  const sched::HostId host = sched_->page(page).host;
  if (host_origins_.size() <= host) host_origins_.resize(host + 1);
  if (host_origins_[host].empty()) host_origins_[host] = parse::UrlOrigin(url);
}

// ---- sitemaps ----

void CrawlLoop::OnSitemaps(const std::string& origin,
                           const std::vector<std::string>& sitemaps) {
  sitemaps_this_round_[origin] = 0;
  for (const auto& url : sitemaps) FetchSitemap(url, 0);
}

void CrawlLoop::FetchSitemap(const std::string& url, int depth) {
  auto normalized = parse::NormalizeUrl(url);
  if (!normalized.ok() || stopping_) return;
  int& count = sitemaps_this_round_[parse::UrlOrigin(normalized.value())];
  if (count >= kMaxSitemapsPerOrigin) return;
  ++count;
  fetch::CrawlRequest req;
  req.url = normalized.value();
  req.defer_decoding = true;  // decoded on the parse pool
  req.keep_raw = warc_ != nullptr;
  net_->Fetch(std::move(req), [this, depth, alive = alive_](
                                  fetch::FetchResult r, double) {
    // Network thread: parse on the pool (up to 50,000 entries: tens of
    // ms), then count and apply on the scheduler's thread.
    if (!*alive) return;
    const double read_at = UnixNow() - r.total_elapsed_s;
    const bool whole = !r.truncated;
    const std::string source = r.final_url;
    PostArchive(&r);
    if (r.outcome != fetch::OutcomeClass::kOk) {
      boost::asio::post(io_, [this, alive] {
        if (*alive) TryDispatch();
      });
      return;
    }
    parse::SitemapOptions o;
    o.sitemap_url = r.final_url;
    const uint64_t bytes = r.body.size();
    *parse_bytes_ += bytes;
    const uint64_t max_decoded = config_.fetch.max_decompressed_bytes;
    auto work = [this, depth, o, bytes, max_decoded, r = std::move(r), alive,
                 read_at, whole, source, parse_bytes = parse_bytes_]() mutable {
      fetch::DecodeDeferredBody(&r, max_decoded);
      auto parsed =
          r.outcome == fetch::OutcomeClass::kOk
              ? parse::ParseSitemap(r.body, o)
              : Result<parse::SitemapResult>(Status::InvalidArgument(r.detail));
      *parse_bytes -= bytes;
      boost::asio::post(io_, [this, depth, parsed = std::move(parsed), alive,
                              read_at, whole, source]() mutable {
        if (!*alive || stopping_) return;
        ++sitemaps_fetched_;
        if (!parsed.ok()) return;
        // A whole list of URLs read covers its host through the read;
        // an index covers nothing itself (its children do, as read),
        // nor does a read cut short (truncated, max_urls, bad XML).
        if (whole && parsed.value().status.ok() &&
            parsed.value().format != parse::SitemapFormat::kSitemapIndex) {
          ObserveSignalCoverage(source, read_at);
        }
        ApplySitemap(std::make_shared<const parse::SitemapResult>(
                         std::move(parsed).value()),
                     0, depth);
      });
    };
    boost::asio::post(*parse_pool_, std::move(work));
  });
}

void CrawlLoop::PostArchive(fetch::FetchResult* r) {
  if (r->raw_headers.empty() && r->redirect_hops.empty()) return;
  // The raw exchange goes to the WARC writer (the parse needs r->body).
  fetch::FetchResult raw;
  raw.url = r->url;
  raw.final_url = r->final_url;
  raw.outcome = r->outcome;
  raw.status = r->status;
  raw.truncated = r->truncated;
  raw.raw_request = std::move(r->raw_request);
  raw.raw_headers = std::move(r->raw_headers);
  raw.raw_body = std::move(r->raw_body);
  raw.remote_ip = r->remote_ip;
  raw.redirect_hops = std::move(r->redirect_hops);
  const double started = UnixNow() - r->total_elapsed_s;
  boost::asio::post(
      io_, [this, alive = alive_, started, raw = std::move(raw)]() mutable {
        if (*alive) ArchiveOnly(std::move(raw), started);
      });
}

void CrawlLoop::ApplySitemap(
    std::shared_ptr<const parse::SitemapResult> sitemap, size_t from,
    int depth) {
  const auto& entries = sitemap->entries;
  const size_t end = std::min(entries.size(), from + kSitemapSlice);
  const double now = UnixNow();
  for (size_t i = from; i < end; ++i) {
    const parse::SitemapEntry& e = entries[i];
    if (e.kind == parse::SitemapEntry::Kind::kSitemap) {
      if (depth < kMaxSitemapDepth) FetchSitemap(e.loc, depth + 1);
      continue;
    }
    const double lastmod = e.lastmod ? static_cast<double>(*e.lastmod) : 0;
    if (RouteAway(e.loc, cluster::WorkItem::Kind::kSitemap, lastmod)) continue;
    const bool known = book_->Find(e.loc).has_value();
    std::optional<sched::PageId> page = AddUrl(e.loc, 1.0, false);
    if (!page || !known || !e.lastmod) continue;
    ConsiderDatedSignal(*page, lastmod, now,
                        sched::SignalSource::kSitemapLastmod);
  }
  RequestCommit();
  if (end < entries.size()) {  // the rest after whatever else is queued
    boost::asio::post(io_, [this, sitemap = std::move(sitemap), end, depth,
                            alive = alive_]() mutable {
      if (*alive && !stopping_) ApplySitemap(std::move(sitemap), end, depth);
    });
  }
  TryDispatch();
}

// ---- signals ----

void CrawlLoop::ObserveSignalCoverage(const std::string& source_url,
                                      double read_at) {
  const std::optional<sched::HostId> host =
      book_->hosts().Find(parse::UrlAuthority(source_url));
  if (host) sched_->ObserveSignalCoverage(*host, read_at);
}

bool CrawlLoop::ConsiderDatedSignal(sched::PageId page, double changed_at,
                                    double now, sched::SignalSource source) {
  // A date is considered once, when it is newer than the last one
  // considered for this page: taken as a signal if it is also newer than
  // our copy (the scheduler's rule, SignalPage), else counted stale (and,
  // as the copy only gets newer, stale for good). Either way the record
  // keeps it, so a restart does not consider it again; a sitemap and a feed
  // dating the same change count it once.
  PageMeta& meta = book_->meta(page);
  if (!sched_->page(page).fetched() || changed_at <= meta.last_signal_lastmod)
    return false;
  meta.last_signal_lastmod = changed_at;
  book_->MarkPage(page);
  return SignalPage(page, now, source, changed_at);
}

bool CrawlLoop::SignalPage(sched::PageId page, double now,
                           sched::SignalSource source, double changed_at) {
  const sched::SignalObs signal{source, changed_at};
  if (sched_->IsStaleSignal(page, now, signal)) {
    ++signals_stale_total_;
    return false;
  }
  ++signals_total_;
  Observe({page, now, signal});
  return true;
}

nlohmann::json CrawlLoop::Signal(const std::vector<std::string>& urls,
                                 double changed_at,
                                 std::function<void(Status)> committed) {
  const double now = UnixNow();
  uint64_t signals = 0, stale = 0, added = 0, ignored = 0, routed = 0;
  std::shared_ptr<RouteJoin> join;
  if (router_) join = std::make_shared<RouteJoin>();
  for (const auto& raw : urls) {
    auto normalized = parse::NormalizeUrl(raw);
    if (!normalized.ok()) {
      ++ignored;
      continue;
    }
    if (RouteAway(normalized.value(), cluster::WorkItem::Kind::kSignal,
                  changed_at, join)) {
      ++routed;
      continue;
    }
    if (auto page = book_->Find(normalized.value())) {
      if (SignalPage(*page, now, sched::SignalSource::kPushedHint,
                     changed_at)) {
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
  if (router_) out["routed"] = routed;  // to the owners of their hosts
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
  if (!work_) work_.emplace(io_.get_executor());
  wake_.cancel();
  housekeeping_.cancel();
  lag_probe_.Stop();
  const double deadline = UnixNow() + grace_s;
  auto finish = std::make_shared<std::function<void()>>();
  auto timer = std::make_shared<boost::asio::steady_timer>(io_);
  *finish = [this, deadline, done, finish, timer, alive = alive_] {
    if (!*alive) return;
    if (!in_flight_.empty() && UnixNow() < deadline) {
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
        if (parse_pool_) parse_pool_->join();
        Status s = writer_->Stop();
        if (s.ok() && !committed.ok()) s = committed;
        if (warc_) {
          Status w = warc_->Close();
          if (s.ok()) s = w;
        }
        // Nothing of ours is in flight: leave the cluster, so the others
        // take our shards (after their handoff delay).
        if (router_) router_->Stop();
        if (changes_) changes_->Stop();
        if (cluster_) cluster_->Stop();
        auto callback = done;
        *finish = nullptr;  // breaks the self-reference
        work_.reset();
        callback(s);
      });
    });
  };
  (*finish)();
}

void CrawlLoop::CountOutcome(std::string_view name) {
  auto it = outcomes_.find(name);
  if (it == outcomes_.end()) {
    outcomes_.emplace(std::string(name), 1);
  } else {
    ++it->second;
  }
}

}  // namespace freshd::daemon

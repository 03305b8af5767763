#include "daemon/crawl_loop.h"

#include <curl/curl.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "base/clock.h"
#include "daemon/fetch_state.h"
#include "daemon/warc_archive.h"
#include "parse/html_fingerprint.h"
#include "parse/http_date.h"
#include "parse/public_suffix.h"
#include "parse/shingle.h"
#include "parse/sitemap.h"
#include "parse/url.h"
#include "spdlog/spdlog.h"

namespace freshd::daemon {
namespace {

constexpr int kMaxSitemapDepth = 1;  // an index, then its children
constexpr int kMaxDispatchPerTick = 1000;

bool IsHtml(const std::string& type) {
  return type == "text/html" || type == "application/xhtml+xml";
}

// "Sat, 21 Nov 2026 19:40:00 GMT" -> Unix seconds, or -1.
double HttpDateOrMinus1(const std::string& value) {
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

}  // namespace

CrawlLoop::CrawlLoop(boost::asio::io_context& io, const Config& config)
    : io_(io), config_(config), tick_(io), lag_probe_(io) {}

CrawlLoop::~CrawlLoop() {
  *alive_ = false;
  if (parse_pool_) {  // queued parses are dropped, a running one finishes
    parse_pool_->stop();
    parse_pool_->join();
  }
}

Result<std::unique_ptr<CrawlLoop>> CrawlLoop::Create(
    boost::asio::io_context& io, const Config& config) {
  std::unique_ptr<CrawlLoop> loop(new CrawlLoop(io, config));
  Status s = loop->Init();
  if (!s.ok()) return s;
  return loop;
}

Status CrawlLoop::Init() {
  started_unix_ = UnixNow();
  auto scope = UrlScope::Create(config_.crawler);
  if (!scope.ok()) return scope.status();
  scope_.emplace(std::move(scope).value());
  // HTML parsing's workers: a few, leaving a core to the io thread.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  parse_pool_ = std::make_unique<boost::asio::thread_pool>(
      std::clamp<unsigned>(cores - 1, 1, 4));

  // LevelDB creates the database directory but not its parents.
  std::error_code ignored;
  std::filesystem::create_directories(
      std::filesystem::path(config_.store.path).parent_path(), ignored);
  auto store = store::PageStore::Open(config_.store);
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();

  auto sched = sched::Scheduler::Create(sched::OptionsFromConfig(config_));
  if (!sched.ok()) return sched.status();
  sched_ = std::move(sched).value();
  std::vector<std::string> urls;
  auto report = RebuildScheduler(*store_, sched_.get(), &hosts_, &urls);
  if (!report.ok()) return report.status();
  recovery_ = std::move(report).value();
  urls_.Assign(std::move(urls));
  host_pages_.assign(hosts_.size(), 0);
  for (sched::PageId id = 0; id < urls_.size(); ++id) {
    ++host_pages_[sched_->page(id).host];
    AddScope(urls_.url(id));
    if (sched_->page(id).fetched()) NoteOrigin(id);
  }
  last_signal_lastmod_ = std::move(recovery_.signal_lastmods);
  last_signal_lastmod_.resize(urls_.size(), 0);

  auto crawler =
      fetch::Crawler::Create(io_, fetch::CrawlerOptionsFromConfig(config_));
  if (!crawler.ok()) return crawler.status();
  crawler_ = std::move(crawler).value();
  if (Status st = LoadFetchState(); !st.ok()) return st;
  last_fetch_state_save_ = started_unix_;
  crawler_->set_sitemap_handler(
      [this, alive = alive_](const std::string& origin,
                             const std::vector<std::string>& sitemaps) {
        if (*alive) OnSitemaps(origin, sitemaps);
      });

  if (!config_.store.warc_dir.empty()) {
    store::WarcWriterOptions wo;
    wo.dir = config_.store.warc_dir;
    wo.rotate_bytes = config_.store.warc_rotate_bytes;
    wo.software = "freshd";
    auto w = store::WarcWriter::Open(wo);
    if (!w.ok()) return w.status();
    warc_ = std::move(w).value();
  }
  return Status::OK();
}

Status CrawlLoop::LoadFetchState() {
  fetch::CrawlerState state;
  host_fetch_state_.assign(hosts_.size(), std::string());
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
        if (auto id = hosts_.Find(h.host)) {
          host_fetch_state_[*id] = h.fetch_state;
        }
        if (decoded.value().gate) state.hosts.push_back(*decoded.value().gate);
        for (auto& r : decoded.value().robots) state.robots.push_back(r);
        return true;
      },
      nullptr, /*skip_corrupt=*/true);
  if (!s.ok()) return s;
  // Stored in Unix seconds; the crawler runs on its steady clock.
  double delta = crawler_->Now() - UnixNow();
  fetch::ShiftTimes(&state.robots, delta);
  fetch::ShiftTimes(&state.hosts, delta);
  crawler_->ImportState(state);
  return Status::OK();
}

Status CrawlLoop::SaveFetchState() {
  fetch::CrawlerState state = crawler_->ExportState();
  double now = UnixNow();
  double delta = now - crawler_->Now();
  fetch::ShiftTimes(&state.robots, delta);
  fetch::ShiftTimes(&state.hosts, delta);
  store::StoreBatch batch;
  for (auto& [name, host_state] : GroupByHost(state)) {
    std::optional<sched::HostId> id = hosts_.Find(name);
    if (!id) continue;  // a host with no pages (e.g. only redirected to)
    if (host_fetch_state_.size() <= *id) host_fetch_state_.resize(*id + 1);
    host_fetch_state_[*id] = EncodeHostFetchState(host_state);
    store::HostRecord base;
    base.fetch_state = host_fetch_state_[*id];
    Status s = PersistHost(*sched_, hosts_, *id, std::move(base), &batch);
    if (!s.ok()) return s;
  }
  last_fetch_state_save_ = now;
  return store_->Commit(batch, now);
}

Status CrawlLoop::AddSeed(std::string_view url, double weight) {
  auto normalized = parse::NormalizeUrl(url);
  if (!normalized.ok()) return normalized.status();
  std::string_view scheme = parse::UrlScheme(normalized.value());
  if (scheme != "http" && scheme != "https") {
    return Status::InvalidArgument("seed is not http(s): " + std::string(url));
  }
  AddScope(normalized.value());
  store::StoreBatch batch;
  bool added = AddUrl(normalized.value(), weight, true, &batch).has_value();
  Commit(&batch, UnixNow());
  if (!added) {
    return Status::ResourceExhausted("seed not added (URL limits): " +
                                     std::string(url));
  }
  return Status::OK();
}

void CrawlLoop::AddScope(std::string_view normalized_url) {
  scope_->Add(normalized_url);
}

bool CrawlLoop::InScope(const std::string& url) const {
  return scope_->Contains(url);
}

std::optional<sched::PageId> CrawlLoop::AddUrl(const std::string& url,
                                               double importance, bool seed,
                                               store::StoreBatch* batch) {
  std::optional<sched::PageId> known = urls_.Find(url);
  double now = UnixNow();
  if (known) {
    if (seed) {
      const float before = sched_->page(*known).importance;
      sched_->Observe(
          {*known, now,
           sched::DiscoveredObs{importance, sched::DiscoverySource::kSeed}});
      if (sched_->page(*known).importance > before) {
        PersistPageState(*known, batch);
      }
    }
    return known;
  }
  if (!seed && !InScope(url)) return std::nullopt;
  auto host = hosts_.Intern(parse::UrlAuthority(url));
  if (!host.ok()) return std::nullopt;
  if (host_pages_.size() <= host.value()) host_pages_.resize(host.value() + 1);
  if (host_pages_[host.value()] >= config_.crawler.max_urls_per_host) {
    return std::nullopt;
  }
  auto id = sched_->AddUrl(host.value(), importance);
  if (!id.ok()) return std::nullopt;
  ++host_pages_[host.value()];
  urls_.Add(url);  // as id.value(): both count the pages added
  last_signal_lastmod_.push_back(0);
  if (!PersistPage(*sched_, id.value(), url, {}, batch).ok()) ++store_errors_;
  return id.value();
}

void CrawlLoop::Start() {
  started_ = true;
  lag_probe_.Start();
  ScheduleTick(0);
}

void CrawlLoop::ScheduleTick(double delay_s) {
  tick_.expires_after(std::chrono::microseconds(
      static_cast<int64_t>(std::clamp(delay_s, 0.0, 1.0) * 1e6)));
  tick_.async_wait([this, alive = alive_](boost::system::error_code ec) {
    if (!ec && *alive) Tick();
  });
}

void CrawlLoop::Tick() {
  if (stopping_) return;
  double now = UnixNow();
  double gate_now = crawler_->Now();
  auto host_open = [&](sched::HostId h) {
    return crawler_->gate().MayStart(hosts_.Name(h), gate_now);
  };
  size_t max_in_flight = static_cast<size_t>(config_.fetch.max_connections);
  for (int i = 0; i < kMaxDispatchPerTick && in_flight_.size() < max_in_flight;
       ++i) {
    std::optional<sched::PageId> page = sched_->Select(now, host_open);
    if (!page) break;
    Dispatch(*page, now);
  }
  if (now >= next_robots_refresh_) RefreshRobots(now);
  if (now - last_fetch_state_save_ >= kFetchStateSaveS &&
      !SaveFetchState().ok()) {
    ++store_errors_;
  }
  store_->MaybeSync(now);
  // Next: when the next token is due, but at least every 250 ms (hosts
  // reopen as their politeness delays pass) and at most every 10 ms.
  ScheduleTick(std::clamp(sched_->NextTokenTime(now) - now, 0.01, 0.25));
}

void CrawlLoop::RefreshRobots(double now) {
  for (const std::string& origin : host_origins_) {
    if (!origin.empty()) crawler_->RefreshRobots(origin);
  }
  const double period = std::clamp(config_.politeness.robots_cache_s / 4,
                                   kMinRobotsRefreshS, kMaxRobotsRefreshS);
  next_robots_refresh_ = now + period;
}

void CrawlLoop::NoteOrigin(sched::PageId page) {
  const sched::HostId host = sched_->page(page).host;
  if (host_origins_.size() <= host) host_origins_.resize(host + 1);
  if (host_origins_[host].empty()) {
    host_origins_[host] = parse::UrlOrigin(urls_.url(page));
  }
}

void CrawlLoop::Dispatch(sched::PageId page, double now) {
  NoteOrigin(page);
  const std::string& url = urls_.url(page);
  InFlight& f = in_flight_[page];
  f.started_unix = now;
  auto previous = store_->GetPage(parse::UrlKey(url), url);
  if (previous.ok()) f.previous = std::move(previous).value();
  fetch::CrawlRequest req;
  req.url = url;
  req.etag = f.previous.etag;
  req.last_modified = f.previous.last_modified;
  req.keep_raw = warc_ != nullptr;
  crawler_->Fetch(std::move(req),
                  [this, page, alive = alive_](fetch::FetchResult r) {
                    if (*alive) OnFetched(page, std::move(r));
                  });
}

void CrawlLoop::OnFetched(sched::PageId page, fetch::FetchResult r) {
  if (r.outcome != fetch::OutcomeClass::kOk || !IsHtml(r.content_type)) {
    Complete(page, std::move(r), std::nullopt);
    return;
  }
  parse::FingerprintOptions fo;
  fo.k = config_.sched.shingle_k;
  fo.m = static_cast<size_t>(config_.sched.sketch_m);
  fo.seed = store_->hash_secret();
  auto work = [this, page, fo, r = std::move(r), alive = alive_]() mutable {
    if (parse_hook_) parse_hook_();
    auto fp = parse::FingerprintHtml(r.body, r.content_type, r.final_url, fo);
    // Back to the io thread (io_ outlives this loop, whose destructor joins
    // the pool; a completion after the loop is gone sees !*alive).
    boost::asio::post(io_, [this, page, r = std::move(r), fp = std::move(fp),
                            alive]() mutable {
      if (*alive) Complete(page, std::move(r), std::move(fp));
    });
  };
  boost::asio::post(*parse_pool_, std::move(work));
}

void CrawlLoop::Complete(sched::PageId page, fetch::FetchResult r,
                         std::optional<Result<parse::PageFingerprint>> parsed) {
  double now = UnixNow();
  auto node = in_flight_.extract(page);
  InFlight f = node.empty() ? InFlight{} : std::move(node.mapped());
  CountOutcome(fetch::OutcomeName(r.outcome));
  spdlog::debug("fetch {} -> {} {} {} bytes {:.0f} ms{}{}", urls_.url(page),
                fetch::OutcomeName(r.outcome), r.status, r.bytes,
                r.total_elapsed_s * 1000, r.detail.empty() ? "" : ": ",
                r.detail);
  if (warc_ && !ArchiveFetch(*warc_, r, f.started_unix).ok()) ++store_errors_;
  store::StoreBatch batch;  // this observation, and pages it discovered
  store::PageRecord record = f.previous;
  record.last_status = r.status;
  record.last_outcome = std::string(fetch::OutcomeName(r.outcome));

  if (r.outcome == fetch::OutcomeClass::kOk) {
    ++fetched_total_;
    recent_fetches_.push_back(now);
    bool first = record.last_fetch_time == 0;
    sched::FetchedObs obs;
    uint64_t hash;
    if (parsed) {
      const Result<parse::PageFingerprint>& fp = *parsed;
      hash = fp.ok() ? fp.value().text.text_hash
                     : parse::TextHash(r.body, store_->hash_secret());
      if (fp.ok()) {
        obs.sketch = fp.value().text.sketch;
        record.sketch = EncodeSketch(obs.sketch);
        if (!fp.value().page.nofollow) {
          for (const auto& link : fp.value().page.links) {
            if (link.kind != parse::LinkKind::kAnchor || link.nofollow)
              continue;
            AddUrl(link.url, 1.0, false, &batch);
          }
        }
      }
    } else {
      hash = parse::TextHash(r.body, store_->hash_secret());
    }
    obs.changed = !first && hash != record.content_hash;
    obs.last_modified = HttpDateOrMinus1(r.last_modified);
    obs.previous_last_modified = HttpDateOrMinus1(record.last_modified);
    record.content_hash = hash;
    record.etag = r.etag;
    record.last_modified = r.last_modified;
    record.last_fetch_time = now;
    sched_->Observe({page, now, std::move(obs)});
  } else if (r.outcome == fetch::OutcomeClass::kNotModified) {
    ++fetched_total_;
    recent_fetches_.push_back(now);
    if (!r.etag.empty()) record.etag = r.etag;
    if (!r.last_modified.empty()) record.last_modified = r.last_modified;
    record.last_fetch_time = now;
    sched_->Observe({page, now, sched::NotModifiedObs{}});
  } else {
    if (r.outcome == fetch::OutcomeClass::kRobotsDenied) ++robots_denied_total_;
    sched_->Observe({page, now, sched::FailedObs{ToFailure(r)}});
  }
  if (Status s = Persist(page, std::move(record), now, &batch); !s.ok()) {
    ++store_errors_;
    spdlog::error("store: {}: {}", urls_.url(page), s.ToString());
  }
}

void CrawlLoop::PersistPageState(sched::PageId page, store::StoreBatch* batch) {
  const std::string& url = urls_.url(page);
  store::PageRecord record;  // a page not yet committed has no fetch data
  auto stored = store_->GetPage(parse::UrlKey(url), url);
  if (stored.ok()) {
    record = std::move(stored).value();
  } else if (stored.status().code() != Status::Code::kNotFound) {
    ++store_errors_;
    spdlog::error("store: {}: {}", url, stored.status().ToString());
    return;
  }
  record.last_signal_lastmod = last_signal_lastmod_[page];
  if (Status s = PersistPage(*sched_, page, url, std::move(record), batch);
      !s.ok()) {
    ++store_errors_;
    spdlog::error("store: {}: {}", url, s.ToString());
  }
}

Status CrawlLoop::Persist(sched::PageId page, store::PageRecord record,
                          double now, store::StoreBatch* batch) {
  record.last_signal_lastmod = last_signal_lastmod_[page];
  Status s =
      PersistPage(*sched_, page, urls_.url(page), std::move(record), batch);
  if (s.ok()) {
    sched::HostId host = sched_->page(page).host;
    store::HostRecord base;
    if (host < host_fetch_state_.size()) {
      base.fetch_state = host_fetch_state_[host];
    }
    s = PersistHost(*sched_, hosts_, host, std::move(base), batch);
  }
  if (s.ok()) s = store_->Commit(*batch, now);
  return s;
}

void CrawlLoop::Commit(store::StoreBatch* batch, double now) {
  if (batch->empty()) return;
  if (Status s = store_->Commit(*batch, now); !s.ok()) {
    ++store_errors_;
    spdlog::error("store: {}", s.ToString());
  }
}

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
  crawler_->Fetch(std::move(req),
                  [this, depth, alive = alive_](fetch::FetchResult r) {
                    if (*alive) OnSitemap(std::move(r), depth);
                  });
}

void CrawlLoop::OnSitemap(fetch::FetchResult r, int depth) {
  if (r.outcome != fetch::OutcomeClass::kOk) return;
  parse::SitemapOptions o;
  o.sitemap_url = r.final_url;
  // Parsed on the pool (up to 50,000 entries: tens of ms), then counted and
  // applied on the io thread, as HTML bodies are.
  auto work = [this, depth, o, body = std::move(r.body), alive = alive_] {
    auto parsed = parse::ParseSitemap(body, o);
    boost::asio::post(
        io_, [this, depth, parsed = std::move(parsed), alive]() mutable {
          if (!*alive || stopping_) return;
          ++sitemaps_fetched_;
          if (!parsed.ok()) return;
          ApplySitemap(std::make_shared<const parse::SitemapResult>(
                           std::move(parsed).value()),
                       0, depth);
        });
  };
  boost::asio::post(*parse_pool_, std::move(work));
}

void CrawlLoop::ApplySitemap(
    std::shared_ptr<const parse::SitemapResult> sitemap, size_t from,
    int depth) {
  const auto& entries = sitemap->entries;
  const size_t end = std::min(entries.size(), from + kSitemapSlice);
  double now = UnixNow();
  store::StoreBatch batch;  // the new pages and the signals of this slice
  for (size_t i = from; i < end; ++i) {
    const parse::SitemapEntry& e = entries[i];
    if (e.kind == parse::SitemapEntry::Kind::kSitemap) {
      if (depth < kMaxSitemapDepth) FetchSitemap(e.loc, depth + 1);
      continue;
    }
    bool known = urls_.Find(e.loc).has_value();
    std::optional<sched::PageId> page = AddUrl(e.loc, 1.0, false, &batch);
    if (!page || !known || !e.lastmod) continue;
    // A lastmod is considered once, when it is newer than the last one
    // considered for this page: taken as a signal if it is also newer than
    // our copy (the scheduler's rule, SignalPage), else counted stale (and,
    // as the copy only gets newer, stale for good). Either way the record
    // keeps it, so a restart does not consider it again.
    double lastmod = static_cast<double>(*e.lastmod);
    if (sched_->page(*page).fetched() &&
        lastmod > last_signal_lastmod_[*page]) {
      last_signal_lastmod_[*page] = lastmod;
      SignalPage(*page, now, sched::SignalSource::kSitemapLastmod, lastmod);
      PersistPageState(*page, &batch);
    }
  }
  Commit(&batch, now);
  if (end < entries.size()) {  // the rest after whatever else is queued
    boost::asio::post(io_, [this, sitemap = std::move(sitemap), end, depth,
                            alive = alive_]() mutable {
      if (*alive && !stopping_) ApplySitemap(std::move(sitemap), end, depth);
    });
  }
}

bool CrawlLoop::SignalPage(sched::PageId page, double now,
                           sched::SignalSource source, double changed_at) {
  const sched::SignalObs signal{source, changed_at};
  if (sched_->IsStaleSignal(page, now, signal)) {
    ++signals_stale_total_;
    return false;
  }
  ++signals_total_;
  sched_->Observe({page, now, signal});
  return true;
}

nlohmann::json CrawlLoop::Signal(const std::vector<std::string>& urls,
                                 double changed_at) {
  double now = UnixNow();
  uint64_t signals = 0, stale = 0, added = 0, ignored = 0;
  store::StoreBatch batch;
  for (const auto& raw : urls) {
    auto normalized = parse::NormalizeUrl(raw);
    if (!normalized.ok()) {
      ++ignored;
      continue;
    }
    if (auto page = urls_.Find(normalized.value())) {
      if (SignalPage(*page, now, sched::SignalSource::kPushedHint,
                     changed_at)) {
        ++signals;
        PersistPageState(*page, &batch);
      } else {
        ++stale;
      }
    } else if (AddUrl(normalized.value(), 1.0, false, &batch)) {
      ++added;
    } else {
      ++ignored;
    }
  }
  Commit(&batch, now);
  return {{"signals", signals},
          {"stale", stale},
          {"added", added},
          {"ignored", ignored}};
}

void CrawlLoop::SetRate(double pages_per_second) {
  sched_->SetRate(pages_per_second, UnixNow());
  config_.budget.rate = pages_per_second;
}

void CrawlLoop::Stop(double grace_s, std::function<void(Status)> done) {
  stopping_ = true;
  tick_.cancel();
  lag_probe_.Stop();
  double deadline = UnixNow() + grace_s;
  auto finish = std::make_shared<std::function<void()>>();
  auto timer = std::make_shared<boost::asio::steady_timer>(io_);
  *finish = [this, deadline, done, finish, timer, alive = alive_] {
    if (!*alive) return;
    if (!in_flight_.empty() && UnixNow() < deadline) {
      timer->expires_after(std::chrono::milliseconds(20));
      timer->async_wait([finish](boost::system::error_code) { (*finish)(); });
      return;
    }
    Status s = SaveFetchState();
    Status sync = store_->MaybeSync(UnixNow(), /*force=*/true);
    if (s.ok()) s = sync;
    if (warc_) {
      Status w = warc_->Close();
      if (s.ok()) s = w;
    }
    auto callback = done;
    *finish = nullptr;  // breaks the self-reference
    callback(s);
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

#include "fetch/crawler.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <set>
#include <unordered_map>

#include "base/clock.h"
#include "fetch/host_addresses.h"
#include "parse/robots.h"
#include "parse/url.h"

namespace freshd::fetch {

namespace asio = boost::asio;

CrawlerOptions CrawlerOptionsFromConfig(const Config& config) {
  CrawlerOptions o;
  o.fetcher.config = config.fetch;
  o.fetcher.user_agent = UserAgentHeader(config.crawler);
  o.fetcher.host_proxies = HostProxiesFromRules(config.rules);
  for (const RuleConfig& r : config.rules) {
    if (!r.origin.empty()) o.fetcher.origin_rules.push_back(r);
  }
  if (const char* dir = std::getenv("CREDENTIALS_DIRECTORY"); dir != nullptr) {
    o.fetcher.credentials_directory = dir;
  }
  o.politeness = config.politeness;
  o.product_token = RobotsProductToken(config.crawler);
  return o;
}

class Crawler::Impl {
 public:
  Impl(asio::io_context& io, CrawlerOptions options,
       std::unique_ptr<HttpFetcher> fetcher)
      : io_(io),
        options_(std::move(options)),
        fetcher_(std::move(fetcher)),
        gate_(options_.politeness),
        robots_(options_.politeness, options_.product_token) {}

  ~Impl() {
    for (auto& [host, h] : hosts_) h.timer->cancel();
  }

  void Fetch(CrawlRequest request, Callback done);
  void RefreshRobots(const std::string& origin);
  double Now() const { return SteadyNow(); }

  asio::io_context& io_;
  const CrawlerOptions options_;
  std::unique_ptr<HttpFetcher> fetcher_;
  PolitenessGate gate_;
  RobotsCache robots_;
  SitemapHandler sitemap_handler_;
  Callback archive_handler_;  // robots.txt exchanges (WARC), optional
  size_t pending_ = 0;
  uint64_t finished_ = 0;
  static constexpr uint64_t kPruneEvery = 1024;

 private:
  struct Job {
    CrawlRequest req;
    Callback done;
    std::string current;  // normalized URL of the next hop
    int hops = 0;
    std::set<std::string> visited;
    double start = 0;
    bool is_robots = false;
    std::string robots_origin;  // robots job: whose robots.txt this is
    bool sent = false;  // this hop's request went on the wire (gate OnSent)
    std::vector<RawHop> raw_hops;  // keep_raw: redirect responses followed
  };
  using JobPtr = std::shared_ptr<Job>;
  struct Host {
    std::deque<JobPtr> queue;  // allowed by robots, waiting for the gate
    std::unique_ptr<asio::steady_timer> timer;
    double timer_at = PolitenessGate::kNever;
  };

  void Step(const JobPtr& job);
  // Queues a fetch of origin's robots.txt, ahead of the host's other jobs.
  void FetchRobots(const std::string& origin);
  void Enqueue(const JobPtr& job, bool front);
  void Pump(const std::string& host);
  void Start(const JobPtr& job);
  void OnFetched(const JobPtr& job, FetchResult r);
  void OnRobots(const JobPtr& job, FetchResult r);
  void Finish(const JobPtr& job, FetchResult r);
  void Fail(const JobPtr& job, OutcomeClass c, std::string detail);
  std::string DenyReason(const std::string& origin) const;
  Host& GetHost(const std::string& host);
  bool KnowAddress(const std::string& host);
  void PumpSameAddress(const std::string& host, const std::string& ip);

  std::unordered_map<std::string, Host> hosts_;
  HostAddresses addresses_{io_, options_.fetcher.config.resolve,
                           [this](const std::string& host) { Pump(host); }};
  // origin -> jobs waiting for that origin's robots.txt
  std::unordered_map<std::string, std::vector<JobPtr>> robots_waiters_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

Crawler::Impl::Host& Crawler::Impl::GetHost(const std::string& host) {
  Host& h = hosts_[host];
  if (!h.timer) h.timer = std::make_unique<asio::steady_timer>(io_);
  return h;
}

void Crawler::Impl::Fetch(CrawlRequest request, Callback done) {
  auto job = std::make_shared<Job>();
  job->req = std::move(request);
  job->done = std::move(done);
  job->start = Now();
  ++pending_;
  Result<std::string> norm = parse::NormalizeUrl(job->req.url);
  if (!norm.ok()) {
    // Report from the loop, never from inside Fetch.
    std::weak_ptr<char> alive = alive_;
    std::string detail = norm.status().message();
    asio::post(io_, [this, alive, job, detail] {
      if (!alive.expired()) Fail(job, OutcomeClass::kBadUrl, detail);
    });
    return;
  }
  job->current = *norm;
  job->visited.insert(job->current);
  std::weak_ptr<char> alive = alive_;
  asio::post(io_, [this, alive, job] {
    if (!alive.expired()) Step(job);
  });
}

void Crawler::Impl::Step(const JobPtr& job) {
  if (job->is_robots || !options_.obey_robots || !job->req.form_body.empty()) {
    Enqueue(job, job->is_robots);
    return;
  }
  std::string origin = parse::UrlOrigin(job->current);
  switch (robots_.Check(origin, parse::UrlPathAndQuery(job->current), Now())) {
    case RobotsCache::Verdict::kAllowed:
      Enqueue(job, false);
      return;
    case RobotsCache::Verdict::kDisallowed:
      Fail(job, OutcomeClass::kRobotsDenied, DenyReason(origin));
      return;
    case RobotsCache::Verdict::kFetchRobots:
      break;
  }
  auto [it, first] = robots_waiters_.try_emplace(origin);
  it->second.push_back(job);
  if (first) FetchRobots(origin);  // else robots.txt is already on its way
}

void Crawler::Impl::FetchRobots(const std::string& origin) {
  auto robots = std::make_shared<Job>();
  robots->is_robots = true;
  robots->robots_origin = origin;
  robots->current = origin + "/robots.txt";
  robots->visited.insert(robots->current);
  robots->start = Now();
  Enqueue(robots, true);
}

void Crawler::Impl::RefreshRobots(const std::string& origin) {
  if (!options_.obey_robots ||
      robots_.Check(origin, "/", Now()) != RobotsCache::Verdict::kFetchRobots) {
    return;  // its copy is still fresh (or robots are not obeyed)
  }
  if (!robots_waiters_.try_emplace(origin).second) return;  // on its way
  FetchRobots(origin);
}

void Crawler::Impl::Enqueue(const JobPtr& job, bool front) {
  std::string host(parse::UrlAuthority(job->current));
  Host& h = GetHost(host);
  if (front) {
    h.queue.push_front(job);
  } else {
    h.queue.push_back(job);
  }
  Pump(host);
}

void Crawler::Impl::Pump(const std::string& host) {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) return;
  Host& h = it->second;
  if (options_.politeness.per_ip && !h.queue.empty() && !KnowAddress(host)) {
    return;  // addresses_ pumps again once the address is known
  }
  double now = Now();
  while (!h.queue.empty() && gate_.MayStart(host, now)) {
    JobPtr job = h.queue.front();
    h.queue.pop_front();
    gate_.OnStart(host, now);
    gate_.AwaitSent(host);
    Start(job);
  }
  if (h.queue.empty()) {
    if (gate_.InFlight(host) == 0 && !addresses_.Pending(host)) {
      h.timer->cancel();
      hosts_.erase(it);
    }
    return;
  }
  if (gate_.AtInFlightLimit(host)) {
    return;  // the finishing request (of this host or its IP) pumps again
  }
  double at = gate_.NextAllowed(host, now);
  if (h.timer_at <= at && h.timer_at > now) return;  // already armed
  h.timer_at = at;
  h.timer->expires_after(std::chrono::microseconds(
      static_cast<int64_t>(std::ceil((at - now) * 1e6))));
  std::weak_ptr<char> alive = alive_;
  h.timer->async_wait([this, alive, host](boost::system::error_code ec) {
    if (alive.expired() || ec) return;
    auto hit = hosts_.find(host);
    if (hit != hosts_.end()) hit->second.timer_at = PolitenessGate::kNever;
    Pump(host);
  });
}

// per_ip: true if the address of `host` is known (and hands it to the
// gate); otherwise a lookup is under way.
bool Crawler::Impl::KnowAddress(const std::string& host) {
  std::optional<std::string> ip = addresses_.Lookup(host);
  if (!ip) return false;
  gate_.SetAddress(host, *ip);
  return true;
}

// per_ip: after a request to `host` ends, hosts waiting on the same IP may
// go now.
void Crawler::Impl::PumpSameAddress(const std::string& host,
                                    const std::string& ip) {
  if (ip.empty()) return;
  std::vector<std::string> others;
  for (const auto& [name, h] : hosts_) {
    if (name != host && !h.queue.empty() && gate_.Address(name) == ip) {
      others.push_back(name);
    }
  }
  for (const std::string& name : others) Pump(name);
}

void Crawler::Impl::Start(const JobPtr& job) {
  FetchRequest fr;
  fr.url = job->current;
  if (job->is_robots) {
    fr.any_content_type = true;
    fr.max_body_bytes = parse::kMaxRobotsBytes;
    fr.truncate_ok = true;  // RFC 9309 §2.5: parse the first 500 KiB
    fr.keep_raw = static_cast<bool>(archive_handler_);
  } else {
    if (job->hops == 0) {
      fr.etag = job->req.etag;
      fr.last_modified = job->req.last_modified;
    }
    fr.keep_raw = job->req.keep_raw;
    fr.defer_decoding = job->req.defer_decoding;
    fr.form_body = job->req.form_body;
    if (!fr.form_body.empty()) fr.any_content_type = true;
  }
  std::weak_ptr<char> alive = alive_;
  job->sent = false;
  fr.on_request_sent = [this, alive, job] {
    if (alive.expired() || job->sent) return;
    job->sent = true;
    gate_.OnSent(parse::UrlAuthority(job->current), Now());
  };
  fetcher_->Fetch(std::move(fr), [this, alive, job](FetchResult r) {
    if (!alive.expired()) OnFetched(job, std::move(r));
  });
}

void Crawler::Impl::OnFetched(const JobPtr& job, FetchResult r) {
  std::string host(parse::UrlAuthority(job->current));
  if (!job->sent) {  // failed before the wire (connect, SSRF guard, ...)
    job->sent = true;
    gate_.OnSent(host, Now());
  }
  gate_.OnFinish(host, Now(), r.outcome, r.status, r.elapsed_s,
                 r.retry_after_s);
  PumpSameAddress(host, gate_.Address(host));
  if (r.outcome == OutcomeClass::kRedirect && job->req.form_body.empty()) {
    int limit = job->is_robots ? kRobotsMaxRedirects
                               : fetcher_->options().config.max_redirects;
    Result<std::string> target = parse::NormalizeUrl(r.location);
    if (!target.ok()) {
      r.outcome = OutcomeClass::kBadRedirect;
      r.detail = "redirect to '" + r.location +
                 "' refused: " + target.status().message();
    } else if (job->hops + 1 > limit) {
      r.outcome = OutcomeClass::kRedirectLoop;
      r.detail = "more than " + std::to_string(limit) + " redirects";
    } else if (!job->visited.insert(*target).second) {
      r.outcome = OutcomeClass::kRedirectLoop;
      r.detail = "redirect loop back to " + *target;
    } else {
      if (job->req.keep_raw || (job->is_robots && archive_handler_)) {
        job->raw_hops.push_back(RawHop{
            job->current, std::move(r.raw_request), std::move(r.raw_headers),
            std::move(r.raw_body), std::move(r.remote_ip)});
      }
      ++job->hops;
      job->current = *target;
      Step(job);
      Pump(host);
      return;
    }
  }
  if (job->is_robots) {
    OnRobots(job, std::move(r));
  } else {
    Finish(job, std::move(r));
  }
  Pump(host);
}

void Crawler::Impl::OnRobots(const JobPtr& job, FetchResult r) {
  const std::string& origin = job->robots_origin;
  r.final_url = job->current;
  robots_.Record(origin, r, Now());
  std::string host(parse::UrlAuthority(origin + "/"));
  gate_.SetCrawlDelay(host, robots_.CrawlDelay(origin));
  if (r.outcome == OutcomeClass::kOk && sitemap_handler_) {
    std::vector<std::string> maps = robots_.Sitemaps(origin);
    if (!maps.empty()) sitemap_handler_(origin, maps);
  }
  if (archive_handler_) {
    FetchResult copy = r;
    copy.url = origin + "/robots.txt";
    copy.redirect_hops = std::move(job->raw_hops);
    archive_handler_(std::move(copy));
  }
  std::vector<JobPtr> waiters = std::move(robots_waiters_[origin]);
  robots_waiters_.erase(origin);
  for (const JobPtr& w : waiters) {
    if (r.outcome == OutcomeClass::kBlockedAddress ||
        r.outcome == OutcomeClass::kBadUrl ||
        r.outcome == OutcomeClass::kProxy) {
      // The origin cannot be contacted at all (or its proxy failed): say
      // so, not "robots".
      Fail(w, r.outcome, r.detail);
      continue;
    }
    if (r.outcome == OutcomeClass::kDns ||
        r.outcome == OutcomeClass::kNetwork ||
        r.outcome == OutcomeClass::kTimeout ||
        r.outcome == OutcomeClass::kTls ||
        r.outcome == OutcomeClass::kProtocol) {
      // Transport failure on robots.txt: the cache now says "disallow all"
      // for a while, but the URL's own story is that the host is unreachable.
      Fail(w, r.outcome, "robots.txt: " + r.detail);
      continue;
    }
    // Decide on what was just fetched even if its lifetime is already over
    // (robots_cache_s = 0 must not loop).
    switch (robots_.CheckCached(origin, parse::UrlPathAndQuery(w->current))) {
      case RobotsCache::Verdict::kAllowed:
        Enqueue(w, false);
        break;
      case RobotsCache::Verdict::kDisallowed:
        Fail(w, OutcomeClass::kRobotsDenied, DenyReason(origin));
        break;
      case RobotsCache::Verdict::kFetchRobots:
        Step(w);
        break;
    }
  }
}

std::string Crawler::Impl::DenyReason(const std::string& origin) const {
  std::string why = robots_.DisallowAllReason(origin);
  if (!why.empty()) return why;
  return "robots.txt of " + origin + " disallows it for '" +
         options_.product_token + "'";
}

void Crawler::Impl::Fail(const JobPtr& job, OutcomeClass c,
                         std::string detail) {
  FetchResult r;
  r.outcome = c;
  r.detail = std::move(detail);
  Finish(job, std::move(r));
}

void Crawler::Impl::Finish(const JobPtr& job, FetchResult r) {
  r.url = job->req.url;
  r.final_url = job->current.empty() ? job->req.url : job->current;
  r.redirects = job->hops;
  r.redirect_hops = std::move(job->raw_hops);
  r.total_elapsed_s = Now() - job->start;
  if (pending_ > 0) --pending_;
  if (++finished_ % kPruneEvery == 0) {
    // Bound per-host memory: forget idle hosts and expired robots entries.
    gate_.PruneIdle(Now());
    robots_.PruneExpired(Now());
  }
  Callback done = std::move(job->done);
  if (done) done(std::move(r));
}

// ---- public shell ----

Crawler::Crawler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Crawler::~Crawler() = default;

Result<std::unique_ptr<Crawler>> Crawler::Create(asio::io_context& io,
                                                 CrawlerOptions options) {
  auto fetcher = HttpFetcher::Create(io, options.fetcher);
  if (!fetcher.ok()) return fetcher.status();
  auto impl =
      std::make_unique<Impl>(io, std::move(options), std::move(*fetcher));
  return std::unique_ptr<Crawler>(new Crawler(std::move(impl)));
}

void Crawler::Fetch(CrawlRequest request, Callback done) {
  impl_->Fetch(std::move(request), std::move(done));
}

void Crawler::RefreshRobots(const std::string& origin) {
  impl_->RefreshRobots(origin);
}

void Crawler::set_sitemap_handler(SitemapHandler handler) {
  impl_->sitemap_handler_ = std::move(handler);
}

void Crawler::set_archive_handler(Callback handler) {
  impl_->archive_handler_ = std::move(handler);
}

const PolitenessGate& Crawler::gate() const { return impl_->gate_; }
const RobotsCache& Crawler::robots() const { return impl_->robots_; }
double Crawler::Now() const { return impl_->Now(); }
size_t Crawler::pending() const { return impl_->pending_; }

CrawlerState Crawler::ExportState() const {
  return CrawlerState{impl_->robots_.Export(), impl_->gate_.Export()};
}

CrawlerState Crawler::ExportState(
    const std::vector<std::string>& origins) const {
  std::vector<std::string> hosts;
  hosts.reserve(origins.size());
  for (const std::string& origin : origins) {
    hosts.emplace_back(parse::UrlAuthority(origin));
  }
  return CrawlerState{impl_->robots_.Export(origins),
                      impl_->gate_.Export(hosts)};
}

void Crawler::ImportState(const CrawlerState& state) {
  impl_->robots_.Import(state.robots);
  impl_->gate_.Import(state.hosts);
  impl_->gate_.HoldAll(state.hold_all_until);
}

}  // namespace freshd::fetch

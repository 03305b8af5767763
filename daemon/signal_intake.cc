#include "daemon/signal_intake.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "fetch/crawler.h"
#include "parse/http_date.h"
#include "parse/link_header.h"
#include "parse/url.h"
#include "sched/recent_signals.h"

namespace freshd::daemon {
namespace {

constexpr int kMaxSitemapDepth = 1;  // an index, then its children

double MedianOf(std::vector<double>* v) {
  if (v->empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t mid = v->size() / 2;
  std::nth_element(v->begin(), v->begin() + mid, v->end());
  return (*v)[mid];
}

nlohmann::json FiniteOrNull(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

const char* DatedSignalCheckName(DatedSignalCheck check) {
  switch (check) {
    case DatedSignalCheck::kOk:
      return "ok";
    case DatedSignalCheck::kFuture:
      return "future";
    case DatedSignalCheck::kTooOld:
      return "too_old";
    case DatedSignalCheck::kBeforeHistory:
      return "before_history";
  }
  return "";
}

DatedSignalCheck CheckDatedSignal(double changed_at, double now,
                                  double known_last_modified) {
  if (std::isnan(changed_at)) return DatedSignalCheck::kTooOld;
  if (changed_at > now + kDatedSignalFutureS) return DatedSignalCheck::kFuture;
  if (changed_at < kDatedSignalFloorUnix) return DatedSignalCheck::kTooOld;
  if (known_last_modified >= 0 &&
      sched::ClaimEnd(changed_at) + 1 < known_last_modified) {
    return DatedSignalCheck::kBeforeHistory;
  }
  return DatedSignalCheck::kOk;
}

SignalIntake::SignalIntake(boost::asio::io_context& io, Options options,
                           PageBook* book, sched::Scheduler* sched,
                           Frontier* frontier, ParseQueue* parse, Hooks hooks)
    : io_(io),
      options_(std::move(options)),
      book_(book),
      sched_(sched),
      frontier_(frontier),
      parse_(parse),
      hooks_(std::move(hooks)) {}

SignalIntake::~SignalIntake() { *alive_ = false; }

void SignalIntake::RefreshRobots(double now, double rate, double turn_s) {
  if (now < next_robots_refresh_ || stopping_) return;
  const size_t slice =
      std::max(kMinRobotsRefreshSlice, static_cast<size_t>(rate * turn_s / 4));
  std::vector<std::string> origins;
  size_t h = robots_refresh_cursor_;
  for (; h < host_origins_.size() && origins.size() < slice; ++h) {
    if (!host_origins_[h].empty() && Owned(static_cast<sched::HostId>(h))) {
      origins.push_back(host_origins_[h]);
    }
  }
  if (!origins.empty()) hooks_.refresh_robots(std::move(origins));
  robots_refresh_cursor_ = h;
  if (h < host_origins_.size()) return;  // the sweep goes on next turn
  robots_refresh_cursor_ = 0;
  const double period = std::clamp(options_.robots_cache_s / 4,
                                   kMinRobotsRefreshS, kMaxRobotsRefreshS);
  next_robots_refresh_ = now + period;
}

void SignalIntake::NoteOrigin(sched::PageId page, std::string_view url) {
  const sched::HostId host = sched_->page(page).host;
  if (host_origins_.size() <= host) host_origins_.resize(host + 1);
  if (host_origins_[host].empty()) host_origins_[host] = parse::UrlOrigin(url);
}

void SignalIntake::OnSitemaps(const std::string& origin,
                              const std::vector<std::string>& sitemaps) {
  sitemaps_this_round_[origin] = 0;
  for (const auto& url : sitemaps) FetchSitemap(url, 0);
}

void SignalIntake::FetchSitemap(const std::string& url, int depth) {
  auto normalized = parse::NormalizeUrl(url);
  if (!normalized.ok() || stopping_ || UrlHeld(normalized.value())) return;
  int& count = sitemaps_this_round_[parse::UrlOrigin(normalized.value())];
  if (count >= kMaxSitemapsPerOrigin) return;
  ++count;
  fetch::CrawlRequest req;
  req.url = normalized.value();
  req.defer_decoding = true;  // decoded on the parse pool
  req.keep_raw = options_.keep_raw;
  hooks_.fetch(std::move(req), [this, depth, alive = alive_](
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
        if (*alive) hooks_.dispatch();
      });
      return;
    }
    parse::SitemapOptions o;
    o.sitemap_url = r.final_url;
    parse_->Submit(
        std::move(r), options_.max_decompressed_bytes,
        [o](fetch::FetchResult& r) {
          auto parsed = r.outcome == fetch::OutcomeClass::kOk
                            ? parse::ParseSitemap(r.body, o)
                            : Result<parse::SitemapResult>(
                                  Status::InvalidArgument(r.detail));
          r.body.clear();
          return parsed;
        },
        [this, alive, depth, read_at, whole, source](
            fetch::FetchResult, Result<parse::SitemapResult> parsed) {
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
  });
}

void SignalIntake::PostArchive(fetch::FetchResult* r) {
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
        if (*alive && !stopping_) hooks_.archive(std::move(raw), started);
      });
}

void SignalIntake::ApplySitemap(
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
    if (RouteAway(e.loc, cluster::WorkItem::Kind::kSitemap, lastmod,
                  sched::SignalSource::kSitemapLastmod)) {
      continue;
    }
    const bool known = book_->Find(e.loc).has_value();
    std::optional<sched::PageId> page =
        frontier_->AddUrl(e.loc, 1.0, false, now);
    if (!page || !known || !e.lastmod) continue;
    ConsiderDatedSignal(*page, lastmod, now,
                        sched::SignalSource::kSitemapLastmod);
  }
  hooks_.commit();
  if (end < entries.size()) {  // the rest after whatever else is queued
    boost::asio::post(io_, [this, sitemap = std::move(sitemap), end, depth,
                            alive = alive_]() mutable {
      if (*alive && !stopping_) ApplySitemap(std::move(sitemap), end, depth);
    });
  }
  hooks_.dispatch();
}

void SignalIntake::ObserveSignalCoverage(const std::string& source_url,
                                         double read_at) {
  const std::optional<sched::HostId> host =
      book_->hosts().Find(parse::UrlAuthority(source_url));
  if (host) sched_->ObserveSignalCoverage(*host, read_at);
}

bool SignalIntake::ConsiderDatedSignal(sched::PageId page, double changed_at,
                                       double now, sched::SignalSource source) {
  // A date is considered once, when it is newer than the last one
  // considered for this page: taken as a signal if it is also newer than
  // our copy (the scheduler's rule, SignalPage), else counted stale (and,
  // as the copy only gets newer, stale for good). Either way the record
  // keeps it, so a restart does not consider it again; a sitemap and a feed
  // dating the same change count it once. A date that cannot be true is
  // dropped before that, and not remembered.
  const double known_last_modified =
      book_->meta(page).last_modified_time().value_or(-1);
  const DatedSignalCheck check =
      CheckDatedSignal(changed_at, now, known_last_modified);
  if (check != DatedSignalCheck::kOk) {
    ++dated_dropped_[sched_->page(page).host][static_cast<int>(check) - 1];
    return false;
  }
  if (!book_->ConsiderDatedSignal(page, changed_at)) return false;
  return SignalPage(page, now, source, changed_at);
}

bool SignalIntake::SignalPage(sched::PageId page, double now,
                              sched::SignalSource source, double changed_at) {
  const sched::SignalObs signal{source, changed_at};
  if (sched_->IsStaleSignal(page, now, signal)) {
    ++signals_stale_total_;
    return false;
  }
  ++signals_total_;
  if (static_cast<size_t>(source) < signals_by_source_.size()) {
    ++signals_by_source_[static_cast<size_t>(source)];
  }
  book_->Observe({page, now, signal});
  return true;
}

void SignalIntake::NoteSiteFeed(const std::string& url, sched::HostId host) {
  if (site_feeds_.count(url) != 0 || stopping_) return;
  const SiteFeedsConfig& c = options_.site_feeds;
  if (site_feeds_.size() >= c.max_total || !frontier_->InScope(url)) return;
  int& per_origin = site_feeds_per_origin_[parse::UrlOrigin(url)];
  if (per_origin >= c.max_per_host) return;
  ++per_origin;
  SiteFeed& feed = site_feeds_[url];
  feed.host = host;
  site_feeds_due_.emplace(0.0, url);  // polled with the next housekeeping
}

void SignalIntake::PollSiteFeeds(double now) {
  while (!site_feeds_due_.empty() && site_feeds_due_.begin()->first <= now &&
         !stopping_) {
    std::string url = site_feeds_due_.begin()->second;
    site_feeds_due_.erase(site_feeds_due_.begin());
    auto it = site_feeds_.find(url);
    if (it == site_feeds_.end() || it->second.in_flight) continue;
    if (!Owned(it->second.host) || UrlHeld(url)) {
      // Another node's host now, or an operator's pattern holds the feed:
      // asked again later, in case that ends.
      site_feeds_due_.emplace(now + PollInterval(url), url);
      continue;
    }
    PollSiteFeed(url);
  }
}

void SignalIntake::PollSiteFeed(const std::string& url) {
  SiteFeed& feed = site_feeds_.at(url);
  feed.in_flight = true;
  fetch::CrawlRequest req;
  req.url = url;
  req.etag = feed.etag;
  req.last_modified = feed.last_modified;
  req.defer_decoding = true;  // decoded on the parse pool
  req.keep_raw = options_.keep_raw;
  hooks_.fetch(std::move(req), [this, url, alive = alive_](fetch::FetchResult r,
                                                           double) {
    // Network thread.
    if (!*alive) return;
    const double read_at = UnixNow() - r.total_elapsed_s;
    // WebSub §4: the Link fields are kept for the parse; the rest of the
    // head goes to the archive.
    std::string links;
    for (std::string_view v : parse::LinkHeaderValues(r.raw_headers)) {
      links.append("Link: ").append(v).append("\r\n");
    }
    PostArchive(&r);
    if (r.outcome != fetch::OutcomeClass::kOk) {
      boost::asio::post(
          io_, [this, url, alive, r = std::move(r), read_at]() mutable {
            if (*alive) SiteFeedDone(url, std::move(r), std::nullopt, read_at);
          });
      return;
    }
    r.raw_headers = std::move(links);
    SubmitFeedParse(std::move(r), [this, alive, url, read_at](
                                      fetch::FetchResult r,
                                      Result<parse::FeedResult> parsed) {
      if (!*alive) return;
      SiteFeedDone(url, std::move(r), std::move(parsed), read_at);
    });
  });
}

void SignalIntake::SubmitFeedParse(
    fetch::FetchResult r,
    std::function<void(fetch::FetchResult, Result<parse::FeedResult>)> done) {
  parse::FeedOptions o;
  o.feed_url = r.final_url;
  // Entries on other hosts are kept here and held to the scope by AddUrl
  // (the scope lives on the scheduler's thread).
  o.cross_host_allowed = [](std::string_view) { return true; };
  o.max_entries = options_.site_feeds.max_entries;
  o.max_bytes = options_.site_feeds.max_bytes;
  const uint64_t max_decoded = std::min<uint64_t>(
      options_.max_decompressed_bytes, options_.site_feeds.max_bytes);
  parse_->Submit(
      std::move(r), max_decoded,
      [o = std::move(o)](fetch::FetchResult& r) {
        Result<parse::FeedResult> parsed =
            r.outcome == fetch::OutcomeClass::kOk
                ? parse::ParseFeed(r.body, o)
                : Result<parse::FeedResult>(Status::InvalidArgument(r.detail));
        // WebSub §4: the response's Link headers name the hub first.
        if (parsed.ok()) {
          parse::UseLinkHeaders(r.raw_headers, o.feed_url, &parsed.value());
        }
        r.body.clear();
        return parsed;
      },
      std::move(done));
}

void SignalIntake::ApplyPushedFeed(const std::string& url, std::string body) {
  if (stopping_) return;
  fetch::FetchResult r;
  r.url = r.final_url = url;
  r.outcome = fetch::OutcomeClass::kOk;
  r.status = 200;
  r.bytes = body.size();
  r.body = std::move(body);
  SubmitFeedParse(
      std::move(r), [this, alive = alive_](fetch::FetchResult,
                                           Result<parse::FeedResult> parsed) {
        if (!*alive || stopping_) return;
        if (parsed.ok()) {
          ApplySiteFeed(parsed.value(), sched::SignalSource::kWebSub);
        } else {
          ++site_feed_counts_.errors;
        }
      });
}

void SignalIntake::SetFeedPushed(const std::string& url, bool pushed) {
  if (pushed) {
    pushed_feeds_.insert(url);
  } else {
    pushed_feeds_.erase(url);
  }
}

void SignalIntake::SiteFeedDone(const std::string& url, fetch::FetchResult head,
                                std::optional<Result<parse::FeedResult>> parsed,
                                double read_at) {
  auto it = site_feeds_.find(url);
  if (it == site_feeds_.end()) return;
  SiteFeed& feed = it->second;
  feed.in_flight = false;
  ++site_feed_counts_.polled;
  bool ok = false;
  if (head.outcome == fetch::OutcomeClass::kNotModified) {
    ++site_feed_counts_.not_modified;
    ok = true;
    ObserveSignalCoverage(url, read_at);  // unchanged: nothing new since
  } else if (parsed && parsed->ok()) {
    feed.etag = head.etag;
    feed.last_modified = head.last_modified;
    ApplySiteFeed(parsed->value(), sched::SignalSource::kFeedEntry);
    ok = true;
    if (hooks_.feed_hubs && !parsed->value().hubs.empty()) {
      hooks_.feed_hubs(url, parsed->value().self_url, parsed->value().hubs);
    }
    // A feed cut short (parse status not OK: max_entries, max_bytes, bad
    // XML) lists only part of the host's news: no coverage.
    if (parsed->value().status.ok() && !head.truncated) {
      ObserveSignalCoverage(url, read_at);
    }
  } else {
    ++site_feed_counts_.errors;
  }
  feed.failures = ok ? 0 : feed.failures + 1;
  if (feed.failures >= kMaxSiteFeedFailures || stopping_) {
    --site_feeds_per_origin_[parse::UrlOrigin(url)];
    site_feeds_.erase(it);
    if (!stopping_ && hooks_.feed_forgotten) hooks_.feed_forgotten(url);
    return;
  }
  site_feeds_due_.emplace(UnixNow() + PollInterval(url), url);
}

void SignalIntake::ApplySiteFeed(const parse::FeedResult& feed,
                                 sched::SignalSource source) {
  const double now = UnixNow();
  for (const parse::FeedEntry& e : feed.entries) {
    ++site_feed_counts_.entries;
    // Another node's shard: routed as a sitemap entry is (URL and date),
    // labelled with its source (feed or websub).
    const double updated = e.updated ? static_cast<double>(*e.updated) : 0;
    if (RouteAway(e.url, cluster::WorkItem::Kind::kSitemap, updated, source)) {
      continue;
    }
    const bool known = book_->Find(e.url).has_value();
    std::optional<sched::PageId> page =
        frontier_->AddUrl(e.url, 1.0, false, now);
    if (!page || !known || !e.updated) continue;
    if (ConsiderDatedSignal(*page, updated, now, source)) {
      ++site_feed_counts_.signals;
    }
  }
  hooks_.commit();
  hooks_.dispatch();
}

nlohmann::json SignalIntake::SiteFeedsJson() const {
  return {{"enabled", options_.site_feeds.enabled},
          {"known", site_feeds_.size()},
          {"polled_total", site_feed_counts_.polled},
          {"not_modified_total", site_feed_counts_.not_modified},
          {"errors_total", site_feed_counts_.errors},
          {"entries_total", site_feed_counts_.entries},
          {"signals_total", site_feed_counts_.signals}};
}

void SignalIntake::AppendSiteFeedMetrics(PrometheusText& out) const {
  const SiteFeedCounts& c = site_feed_counts_;
  out.Gauge("freshd_site_feeds", "RSS and Atom feeds being polled.",
            static_cast<double>(site_feeds_.size()));
  out.Counter("freshd_site_feed_polls_total",
              "Feed fetches that ended (304s and failures included).",
              static_cast<double>(c.polled));
  out.Counter("freshd_site_feed_not_modified_total",
              "Feed fetches answered 304.",
              static_cast<double>(c.not_modified));
  out.Counter("freshd_site_feed_errors_total",
              "Feed fetches that failed or did not parse as a feed.",
              static_cast<double>(c.errors));
  out.Counter("freshd_site_feed_entries_total", "Feed entries read.",
              static_cast<double>(c.entries));
  out.Counter("freshd_site_feed_signals_total",
              "Change signals taken from feed entry dates.",
              static_cast<double>(c.signals));
}

uint64_t SignalIntake::dated_dropped(DatedSignalCheck reason) const {
  const int i = static_cast<int>(reason) - 1;
  if (i < 0 || i >= kDatedSignalDropReasons) return 0;
  uint64_t n = 0;
  for (const auto& [host, counts] : dated_dropped_) n += counts[i];
  return n;
}

nlohmann::json SignalIntake::SignalSourcesJson() const {
  const sched::HostPool& pool = sched_->hosts();
  const size_t hosts = pool.hosts();
  const size_t stride = std::max<size_t>(
      1, (hosts + kSourceSampleHosts - 1) / kSourceSampleHosts);
  nlohmann::json sources = nlohmann::json::object();
  for (int i = 0; i < sched::kSignalSources; ++i) {
    const auto source = static_cast<sched::SignalSource>(i);
    uint64_t with_estimate = 0;
    std::vector<double> recall, precision;
    for (size_t h = 0; h < hosts; ++h) {
      const sched::HostStats* stats = pool.Find(static_cast<sched::HostId>(h));
      if (stats == nullptr || ((stats->sources_seen() >> i) & 1) == 0) {
        continue;
      }
      ++with_estimate;
      if (h % stride != 0) continue;
      const sched::SignalParams p =
          pool.SourceParams(static_cast<sched::HostId>(h), source);
      const double signalled = p.alpha * p.delta;
      recall.push_back(p.alpha);
      if (signalled + p.nu > 0) {
        precision.push_back(signalled / (signalled + p.nu));
      }
    }
    sources[sched::SignalSourceName(source)] = {
        {"signals_total", signals_by_source_[i]},
        {"hosts", with_estimate},
        {"median_recall", FiniteOrNull(MedianOf(&recall))},
        {"median_precision", FiniteOrNull(MedianOf(&precision))}};
  }
  std::vector<std::pair<uint64_t, sched::HostId>> worst;
  uint64_t totals[kDatedSignalDropReasons] = {};
  for (const auto& [host, counts] : dated_dropped_) {
    uint64_t sum = 0;
    for (int r = 0; r < kDatedSignalDropReasons; ++r) {
      totals[r] += counts[r];
      sum += counts[r];
    }
    worst.emplace_back(sum, host);
  }
  const size_t listed = std::min(worst.size(), kDroppedHostsListed);
  std::partial_sort(worst.begin(), worst.begin() + listed, worst.end(),
                    [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first
                                                : a.second < b.second;
                    });
  nlohmann::json listed_hosts = nlohmann::json::array();
  for (size_t k = 0; k < listed; ++k) {
    const auto& counts = dated_dropped_.at(worst[k].second);
    nlohmann::json entry = {{"host", book_->hosts().Name(worst[k].second)}};
    for (int r = 0; r < kDatedSignalDropReasons; ++r) {
      entry[DatedSignalCheckName(static_cast<DatedSignalCheck>(r + 1))] =
          counts[r];
    }
    listed_hosts.push_back(std::move(entry));
  }
  nlohmann::json dropped = {{"hosts_total", dated_dropped_.size()},
                            {"hosts", std::move(listed_hosts)}};
  for (int r = 0; r < kDatedSignalDropReasons; ++r) {
    dropped[std::string(
                DatedSignalCheckName(static_cast<DatedSignalCheck>(r + 1))) +
            "_total"] = totals[r];
  }
  return {{"sources", std::move(sources)}, {"lastmod_dropped", dropped}};
}

void SignalIntake::AppendSignalSourceMetrics(PrometheusText& out) const {
  const nlohmann::json j = SignalSourcesJson();
  const nlohmann::json& sources = j["sources"];
  const auto family = [&](std::string_view name, std::string_view type,
                          std::string_view help, const char* field) {
    out.Family(name, type, help);
    for (int i = 0; i < sched::kSignalSources; ++i) {
      const char* source =
          sched::SignalSourceName(static_cast<sched::SignalSource>(i));
      const nlohmann::json& v = sources[source][field];
      if (v.is_number()) {
        out.Sample(name, {{"source", source}}, v.get<double>());
      }
    }
  };
  family("freshd_signal_source_signals_total", "counter",
         "Change signals taken, by source.", "signals_total");
  family("freshd_signal_source_hosts", "gauge",
         "Hosts with their own estimate of the source's quality.", "hosts");
  family("freshd_signal_source_recall_median", "gauge",
         "Median over hosts of the source's recall (the share of changes it "
         "announces).",
         "median_recall");
  family("freshd_signal_source_precision_median", "gauge",
         "Median over hosts of the source's precision: recall x change rate "
         "/ (that + false-signal rate).",
         "median_precision");
  const nlohmann::json& dropped = j["lastmod_dropped"];
  out.Family("freshd_signal_source_dated_dropped_total", "counter",
             "Sitemap lastmods and feed entry dates dropped as impossible, "
             "by reason.");
  for (int r = 1; r <= kDatedSignalDropReasons; ++r) {
    const std::string reason =
        DatedSignalCheckName(static_cast<DatedSignalCheck>(r));
    out.Sample("freshd_signal_source_dated_dropped_total", {{"reason", reason}},
               dropped[reason + "_total"].get<double>());
  }
  out.Gauge("freshd_signal_source_dated_dropped_hosts",
            "Hosts that sent a sitemap lastmod or feed entry date dropped "
            "as impossible.",
            dropped["hosts_total"].get<double>());
}

}  // namespace freshd::daemon

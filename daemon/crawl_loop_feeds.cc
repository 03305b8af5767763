// CrawlLoop's site feeds ([site_feeds]; crawl_loop.h): RSS and Atom feeds
// that crawled pages link are polled like sitemaps. A feed is kept when its
// URL is in scope and its origin has fewer than max_per_host feeds (and
// there are fewer than max_total); it is fetched at once, then every
// poll_interval, through the politeness gate (robots.txt obeyed) with the
// validators of its last 200 (conditional GET), outside the token budget
// as sitemaps are. Bodies are parsed on the parse pool (parse/feed.h);
// entries in scope become pages, and an entry dated after our copy of its
// page is a change signal (source kFeedEntry, through the same path as a
// sitemap lastmod: ConsiderDatedSignal). The list of feeds is not stored:
// after a restart, feeds come back as the pages naming them are fetched.
// Everything here runs on the scheduler's thread, but for the fetch
// callback (network thread) and the parse (pool).

#include <boost/asio/post.hpp>

#include "base/clock.h"
#include "daemon/crawl_loop.h"
#include "fetch/deferred_body.h"
#include "parse/url.h"

namespace freshd::daemon {

void CrawlLoop::NoteSiteFeed(const std::string& url, sched::HostId host) {
  if (site_feeds_.count(url) != 0 || stopping_) return;
  const SiteFeedsConfig& c = config_.site_feeds;
  if (site_feeds_.size() >= c.max_total || !InScope(url)) return;
  int& per_origin = site_feeds_per_origin_[parse::UrlOrigin(url)];
  if (per_origin >= c.max_per_host) return;
  ++per_origin;
  SiteFeed& feed = site_feeds_[url];
  feed.host = host;
  site_feeds_due_.emplace(0.0, url);  // polled with the next housekeeping
}

void CrawlLoop::PollSiteFeeds(double now) {
  while (!site_feeds_due_.empty() && site_feeds_due_.begin()->first <= now &&
         !stopping_) {
    std::string url = site_feeds_due_.begin()->second;
    site_feeds_due_.erase(site_feeds_due_.begin());
    auto it = site_feeds_.find(url);
    if (it == site_feeds_.end() || it->second.in_flight) continue;
    if (cluster_ && !OwnsHost(it->second.host)) {
      // Another node's host now: asked again later, in case it comes back.
      site_feeds_due_.emplace(now + config_.site_feeds.poll_interval_s, url);
      continue;
    }
    PollSiteFeed(url);
  }
}

void CrawlLoop::PollSiteFeed(const std::string& url) {
  SiteFeed& feed = site_feeds_.at(url);
  feed.in_flight = true;
  fetch::CrawlRequest req;
  req.url = url;
  req.etag = feed.etag;
  req.last_modified = feed.last_modified;
  req.defer_decoding = true;  // decoded on the parse pool
  req.keep_raw = warc_ != nullptr;
  net_->Fetch(std::move(req), [this, url, alive = alive_](fetch::FetchResult r,
                                                          double) {
    // Network thread.
    if (!*alive) return;
    const double read_at = UnixNow() - r.total_elapsed_s;
    PostArchive(&r);
    if (r.outcome != fetch::OutcomeClass::kOk) {
      boost::asio::post(
          io_, [this, url, alive, r = std::move(r), read_at]() mutable {
            if (*alive) SiteFeedDone(url, std::move(r), std::nullopt, read_at);
          });
      return;
    }
    parse::FeedOptions o;
    o.feed_url = r.final_url;
    // Entries on other hosts are kept here and held to the scope by AddUrl
    // (the scope lives on the scheduler's thread).
    o.cross_host_allowed = [](std::string_view) { return true; };
    o.max_entries = config_.site_feeds.max_entries;
    o.max_bytes = config_.site_feeds.max_bytes;
    const uint64_t bytes = r.body.size();
    *parse_bytes_ += bytes;
    const uint64_t max_decoded = std::min<uint64_t>(
        config_.fetch.max_decompressed_bytes, config_.site_feeds.max_bytes);
    auto work = [this, url, o = std::move(o), bytes, max_decoded,
                 r = std::move(r), alive, read_at,
                 parse_bytes = parse_bytes_]() mutable {
      fetch::DecodeDeferredBody(&r, max_decoded);
      Result<parse::FeedResult> parsed =
          r.outcome == fetch::OutcomeClass::kOk
              ? parse::ParseFeed(r.body, o)
              : Result<parse::FeedResult>(Status::InvalidArgument(r.detail));
      *parse_bytes -= bytes;
      r.body.clear();
      boost::asio::post(
          io_, [this, url, r = std::move(r), parsed = std::move(parsed), alive,
                read_at]() mutable {
            if (*alive) {
              SiteFeedDone(url, std::move(r), std::move(parsed), read_at);
            }
          });
    };
    boost::asio::post(*parse_pool_, std::move(work));
  });
}

void CrawlLoop::SiteFeedDone(const std::string& url, fetch::FetchResult head,
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
    ApplySiteFeed(parsed->value());
    ok = true;
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
    return;
  }
  site_feeds_due_.emplace(UnixNow() + config_.site_feeds.poll_interval_s, url);
}

void CrawlLoop::ApplySiteFeed(const parse::FeedResult& feed) {
  const double now = UnixNow();
  for (const parse::FeedEntry& e : feed.entries) {
    ++site_feed_counts_.entries;
    // Another node's shard: routed as a sitemap entry is (URL and date).
    const double updated = e.updated ? static_cast<double>(*e.updated) : 0;
    if (RouteAway(e.url, cluster::WorkItem::Kind::kSitemap, updated)) continue;
    const bool known = book_->Find(e.url).has_value();
    std::optional<sched::PageId> page = AddUrl(e.url, 1.0, false);
    if (!page || !known || !e.updated) continue;
    if (ConsiderDatedSignal(*page, updated, now,
                            sched::SignalSource::kFeedEntry)) {
      ++site_feed_counts_.signals;
    }
  }
  RequestCommit();
  TryDispatch();
}

nlohmann::json CrawlLoop::SiteFeedsJson() const {
  return {{"enabled", config_.site_feeds.enabled},
          {"known", site_feeds_.size()},
          {"polled_total", site_feed_counts_.polled},
          {"not_modified_total", site_feed_counts_.not_modified},
          {"errors_total", site_feed_counts_.errors},
          {"entries_total", site_feed_counts_.entries},
          {"signals_total", site_feed_counts_.signals}};
}

void CrawlLoop::AppendSiteFeedMetrics(PrometheusText& out) const {
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

}  // namespace freshd::daemon

// Crawler: the polite fetch path for one URL at a time, on an io_context.
// For each handed URL it (1) normalizes it (parse/url.h); (2) makes sure the
// origin's robots.txt is known (RobotsCache; fetched first, through the
// same gate, any content type, 500 KiB, up to 5 redirects) and refuses
// disallowed URLs as kRobotsDenied; (3) waits until the PolitenessGate lets
// the host be contacted (timers, no busy loop) and fetches with HttpFetcher;
// (4) follows redirects itself, every hop through robots and the gate,
// refusing non-http(s) targets (kBadRedirect) and loops or chains longer
// than [fetch] max_redirects (kRedirectLoop). Sitemap lines of robots.txt
// are reported through the sitemap handler. With [politeness] per_ip each
// host's address is looked up first (host_addresses.h) so the gate can
// also space hosts that share an IP. ExportState()/ImportState() carry the
// robots cache and gate state across restarts.
//
// It never fetches anything it was not handed (robots.txt aside): URLs wait
// only in per-host queues holding what the caller gave it. The scheduler
// can consult gate() to hand out URLs only for hosts that may go now.
// Not thread-safe: use on the io_context thread.

#ifndef FRESHD_FETCH_CRAWLER_H_
#define FRESHD_FETCH_CRAWLER_H_

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "fetch/http_fetcher.h"
#include "fetch/outcome.h"
#include "fetch/politeness_gate.h"
#include "fetch/robots_cache.h"

namespace freshd::fetch {

struct CrawlerOptions {
  FetcherOptions fetcher;
  PolitenessConfig politeness;
  std::string product_token = "freshd";  // what robots.txt groups match
  bool obey_robots = true;               // false only for benchmarks
};

// Options from a loaded Config: [fetch], [politeness], and the User-Agent
// header / product token of [crawler] (conf/config.h).
CrawlerOptions CrawlerOptionsFromConfig(const Config& config);

struct CrawlRequest {
  std::string url;
  std::string etag;  // conditional GET validators (first hop)
  std::string last_modified;
  bool keep_raw = false;        // keep raw_headers/raw_body (WARC output)
  bool defer_decoding = false;  // FetchRequest::defer_decoding (last hop)
  // Not empty: a POST of this application/x-www-form-urlencoded body (a
  // WebSub subscription request) instead of a GET: politeness gate and
  // SSRF guard as any fetch; robots.txt not consulted (not a crawl: an API
  // the hub invites), a redirect returned, not followed; any content type.
  std::string form_body;
};

// What a daemon persists across restarts (times on Crawler::Now()'s clock:
// shift by unix_now - Now() before storing, the other way after loading).
struct CrawlerState {
  std::vector<RobotsSnapshot> robots;
  std::vector<GateHostSnapshot> hosts;
  // On import: no host before this (PolitenessGate::HoldAll); not exported.
  double hold_all_until = 0;
};

class Crawler {
 public:
  using Callback = std::function<void(FetchResult)>;
  // (origin, absolute sitemap URLs) after each successful robots.txt fetch.
  using SitemapHandler =
      std::function<void(const std::string&, const std::vector<std::string>&)>;

  // `io` must outlive the crawler. Fails as HttpFetcher::Create.
  static Result<std::unique_ptr<Crawler>> Create(boost::asio::io_context& io,
                                                 CrawlerOptions options);
  ~Crawler();  // pending callbacks are dropped, not called

  // Fetches `request.url` politely; `done` runs once on the io thread (never
  // inside Fetch) with the final outcome: url as given, final_url after
  // redirects, redirects = hops followed, total_elapsed_s including waits.
  void Fetch(CrawlRequest request, Callback done);

  // Fetches `origin`'s robots.txt (parse::UrlOrigin form) now, through the
  // gate and ahead of the host's queued URLs, if its cached copy has expired
  // (or was never fetched, or was dropped) and no fetch of it is on its
  // way; its sitemaps are then reported as after any robots.txt fetch. So a
  // caller can have sitemaps read every robots cache period on hosts it
  // hands no URL to. No-op when robots are not obeyed.
  void RefreshRobots(const std::string& origin);

  void set_sitemap_handler(SitemapHandler handler);
  // Set before fetching: robots.txt fetches keep their raw exchange and
  // each is handed here (on the io thread) with its redirect hops, for
  // archiving; url is the robots.txt URL, final_url where it ended.
  void set_archive_handler(Callback handler);

  const PolitenessGate& gate() const;
  const RobotsCache& robots() const;
  // The clock the gate and robots cache run on (steady, seconds).
  double Now() const;
  // URLs handed in and not yet reported.
  size_t pending() const;

  // Robots cache and per-host gate state, for persistence; Import sets the
  // listed origins/hosts (call before fetching, on the io thread).
  CrawlerState ExportState() const;
  // The same for the listed origins (parse::UrlOrigin form) only: their
  // robots.txt entries and their hosts' gate state.
  CrawlerState ExportState(const std::vector<std::string>& origins) const;
  void ImportState(const CrawlerState& state);

 private:
  class Impl;
  explicit Crawler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_CRAWLER_H_

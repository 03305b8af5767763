// The whole of freshd's configuration as one typed, validated value.
//
// LoadConfigFile() reads TOML (toml11). Every key has a default (the values
// below, documented key by key in systemd/freshd.toml); an unknown key, a
// wrong type or an out-of-range value is an error whose message names the
// file, the line and the key: "freshd.toml:12: [budget] rate: must be > 0".
// Durations are stored as seconds (double), sizes as bytes.

#ifndef FRESHD_CONF_CONFIG_H_
#define FRESHD_CONF_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace freshd {

struct CrawlerConfig {
  // Sent as the User-Agent header, followed by " (+contact_url)" when set.
  // Its leading product token (e.g. "freshd") is what robots.txt matches.
  std::string user_agent = "freshd/0.1";
  std::string contact_url;
  std::string seeds;  // file of seed URLs, one per line, optional weight
  // Which discovered URLs are admitted: "seed-hosts" (hosts of the seeds),
  // "seed-domains" (the registrable domains of the seed hosts, by the Public
  // Suffix List: a seed on news.bbc.co.uk admits *.bbc.co.uk) or "any".
  std::string scope = "seed-hosts";
  std::vector<std::string> include;  // RE2 regexes; empty = all
  std::vector<std::string> exclude;  // RE2 regexes, win over include
  uint64_t max_urls_per_host = 100000;
  // New URLs one host may add a minute (a token bucket a minute deep;
  // seeds not counted; 0: no bound): over it they are dropped and counted
  // (daemon/new_url_rate.h).
  uint64_t max_new_urls_per_host_per_minute = 60000;
  uint64_t max_urls = 10000000;
  // Pages gone for good leave the frontier and the store
  // (daemon/page_book.h "Removal"): after this many consecutive 404/410
  // answers (0: never), or after this long with no HTTP answer (DNS or
  // connect failures; 0: never).
  uint64_t gone_after_tries = 3;
  double gone_after_unreachable_s = 30 * 86400.0;
  // Duplicate URLs collapse into one page (daemon/page_book.h
  // "Duplicates"): aliases kept at most, and as many content hashes
  // indexed (0: no collapse).
  uint64_t max_aliases = 100000;

  bool operator==(const CrawlerConfig&) const = default;
};

struct BudgetConfig {
  double rate = 1.0;    // pages per second, constant (token bucket)
  double burst = 10.0;  // token bucket depth

  bool operator==(const BudgetConfig&) const = default;
};

struct PolitenessConfig {
  double min_delay_s = 1.0;         // between two requests to one host
  double max_crawl_delay_s = 30.0;  // robots.txt Crawl-delay honoured up to
  int max_in_flight_per_host = 1;
  bool per_ip = false;  // also apply the gate per resolved IP address
  double adaptive_delay_factor = 0.0;  // delay >= factor * last response time
  double backoff_initial_s = 30.0;     // first back-off after an error
  double backoff_max_s = 3600.0;       // back-off ceiling (doubles per error)
  double robots_cache_s = 86400.0;     // robots.txt cache lifetime

  bool operator==(const PolitenessConfig&) const = default;
};

struct FetchConfig {
  double connect_timeout_s = 10.0;
  double timeout_s = 30.0;          // whole transfer
  uint64_t low_speed_bytes = 1024;  // slower than this for low_speed_time
  double low_speed_time_s = 10.0;   // ... is cut off
  uint64_t max_header_bytes = 65536;
  uint64_t max_body_bytes = 10ull << 20;
  uint64_t max_decompressed_bytes = 50ull << 20;
  int max_redirects = 5;
  int max_connections = 64;  // across all hosts
  std::vector<std::string> content_types = {"text/html",
                                            "application/xhtml+xml",
                                            "text/plain",
                                            "application/xml",
                                            "text/xml",
                                            "application/rss+xml",
                                            "application/atom+xml"};
  bool allow_private_networks = false;
  bool tls_verify = true;
  std::string ca_file;  // PEM bundle of trusted CAs; empty: system store
  // host -> IP address, used instead of DNS (tests, split-horizon setups).
  std::map<std::string, std::string> resolve;
  // Egress proxy for every fetch ("" = direct): "http://host:port",
  // "https://host:port" or "socks5://host:port" (never socks5h: freshd
  // resolves and checks the target itself). No credentials in the URL.
  std::string proxy;
  // "user:password" on one line, for the proxy; refused at start when
  // readable by group or others.
  std::string proxy_credentials_file;

  bool operator==(const FetchConfig&) const = default;
};

struct SchedConfig {
  // uniform, nutch, stormcrawler, freshness, age, ncis, ncis1, ncis2, cis,
  // longevity, longevity-bound.
  std::string policy = "ncis";
  int shingle_k = 4;             // words per shingle
  int sketch_m = 64;             // bottom-m min-hash sketch size
  int history = 4;               // change profiles kept (Olston & Pandey h)
  double new_page_value = 1.0;   // crawl value of a never-fetched URL
  double risk_rho = 0.0;         // longevity: phi <= rho * T / D_max; 0 auto
  double learning_l = 0.0;       // longevity: phi <= l * refreshes so far
                                 // (days; 0: half the mean refresh interval),
                                 // until a profile holds 3 points
  double min_interval_s = 60.0;  // never refetch sooner than this
  double max_interval_s = 90 * 86400.0;  // never leave a page longer
  // Mean time between changes assumed before any change is seen, worth one
  // observed change: the prior of the global change-rate estimate, which
  // hosts and then pages shrink toward.
  double prior_change_interval_s = 86400.0;
  // A pushed hint (POST /signal, which says no change time) that arrives
  // this soon after the page's fetch is dropped as probably about a change
  // that fetch already saw. Sitemap lastmod signals need no window: one not
  // after the last fetch is always dropped.
  double signal_window_s = 0;
  // Signal policies: value each page over its change rate's uncertainty
  // (three value evaluations per value) rather than at the estimate alone.
  bool value_over_rate_uncertainty = true;
  // "gamma": one change rate per host as every page's prior; "mixture": a
  // distribution of rates per host (sched/rate_mixture.h).
  std::string rate_model = "mixture";
  // Fetch again to learn a rate (sched/scheduler.h SchedulerOptions::explore).
  bool explore = true;

  bool operator==(const SchedConfig&) const = default;
};

struct StoreConfig {
  std::string path = "/var/lib/freshd/db";
  double sync_interval_s = 1.0;  // a crash loses at most this window
  uint64_t block_cache_bytes = 64ull << 20;
  std::string warc_dir;  // empty: no WARC output
  uint64_t warc_rotate_bytes = 1ull << 30;
  // Identical-payload-digest dedup of WARC responses, from a digest index in
  // the store holding at most this many payloads (the oldest go first).
  bool warc_dedup = true;
  uint64_t warc_dedup_entries = 1000000;
  // 4xx/5xx responses archived too (redirects, robots.txt and sitemaps are
  // always archived).
  bool warc_errors = true;

  bool operator==(const StoreConfig&) const = default;
};

// The engine's stages (daemon/README.md): the parse pool's size and the
// bytes of fetched bodies that may wait for parsing or writing before
// dispatch slows down (backpressure).
struct EngineConfig {
  int parse_threads = 0;  // 0: one per core
  uint64_t queue_bytes = 64ull << 20;

  bool operator==(const EngineConfig&) const = default;
};

// The change feed (daemon/change_feed.h): one event per fetch that finds a
// page new, changed, gone, or unchanged after a change signal, kept in the
// store in the commit of the page's record; the oldest are dropped past
// max_events or max_age.
struct FeedConfig {
  bool enabled = true;
  uint64_t max_events = 1000000;
  double max_age_s = 7 * 86400.0;

  bool operator==(const FeedConfig&) const = default;
};

// RSS and Atom feeds that crawled pages name (<link rel=alternate
// type=application/rss+xml|atom+xml>), read for change signals as sitemaps
// are: each feed of an in-scope host is fetched through the politeness gate
// (robots.txt obeyed, conditional GET) every poll_interval, at most
// max_per_host feeds a host and max_total in all; an entry dated after our
// copy of its page is a change signal, an unknown in-scope entry a new page.
// Not to be confused with [feed], the change feed freshd publishes.
struct SiteFeedsConfig {
  bool enabled = true;
  int max_per_host = 4;
  uint64_t max_total = 10000;
  double poll_interval_s = 3600;
  uint64_t max_entries = 1000;      // read from one feed
  uint64_t max_bytes = 4ull << 20;  // of one (decompressed) feed

  bool operator==(const SiteFeedsConfig&) const = default;
};

struct StatusConfig {
  std::string listen = "127.0.0.1:8931";
  // Host names accepted in the Host and Origin headers besides loopback
  // literals, "localhost" and the listening address (no port, no scheme).
  std::vector<std::string> allowed_hosts;
  // File holding a bearer token required for POST (and for every request
  // when listen is not a loopback address, where it is mandatory); empty:
  // none.
  std::string token_file;

  bool operator==(const StatusConfig&) const = default;
};

// The push listener (daemon/push_listener.h): sites' change pings
// (IndexNow) reach freshd here, on an address of its own, never the status
// endpoint's. listen empty: off. Read at start only (a SIGHUP reports a
// change as needing a restart).
struct PushConfig {
  std::string listen;      // "ADDRESS:PORT"; empty: no push listener
  std::string public_url;  // how others reach it (behind a proxy: https://…)
  // Peers (CIDRs or addresses) whose X-Forwarded-For names the client:
  // the reverse proxy in front (TLS, port 443).
  std::vector<std::string> trusted_proxies;
  uint64_t max_body_bytes = 4ull << 20;  // a request's body
  int max_connections = 256;             // open at once, all peers
  int max_connections_per_client = 16;   // per peer address
  int client_requests_per_minute = 60;   // per client, before anything
  int host_requests_per_minute = 600;    // per verified host
  double header_timeout_s = 5;
  double body_timeout_s = 10;
  double key_cache_s = 3600;         // how long a key file's verdict holds
  int max_pending_per_host = 10000;  // URLs waiting for a key check
  // WebSub subscriber (needs listen and public_url): subscriptions at once
  // (0: none), the lease asked of hubs, the least time between two requests
  // for one subscription, and how many times less often a feed with an
  // active subscription is polled.
  int websub_max_subscriptions = 1000;
  double websub_lease_s = 864000;  // 10 days
  double websub_min_renew_interval_s = 60;
  double websub_poll_slowdown = 6;

  bool operator==(const PushConfig&) const = default;
};

struct LogConfig {
  std::string level = "info";  // trace, debug, info, warn, error, off
  double progress_s = 60;      // info progress line period; 0: none

  bool operator==(const LogConfig&) const = default;
};

// Running as one node of a cluster (cluster/README.md): hosts hash to
// `shards` shards; live nodes announce themselves in a NATS JetStream
// key-value bucket every `heartbeat` and are dead `ttl` after their last
// one; each shard belongs to one live node (rendezvous hashing), which
// starts fetching it `ttl` after it became its owner. nats_url empty: a
// single node, as without a cluster.
struct ClusterConfig {
  std::string nats_url;  // e.g. nats://127.0.0.1:4222; empty: no cluster
  std::string node;      // this node's unique name; empty: the host name
  int shards = 256;      // fixed for the life of a cluster
  double heartbeat_s = 1.0;
  double ttl_s = 5.0;
  // The change stream freshd_changes (every node's change-feed events), as
  // the first node creates it: events older than this, or past this many
  // bytes, go first.
  double changes_max_age_s = 7 * 86400.0;
  uint64_t changes_max_bytes = uint64_t{1} << 30;

  bool operator==(const ClusterConfig&) const = default;
};

// One [[rule]] (array of tables): an operator's constraint on the pages it
// matches, honoured by the scheduler while value order spends the rest of
// the budget (sched/scheduler.h PageRule). Matched by `host` (exactly, or
// "*.example.com": every subdomain of example.com, not example.com itself)
// or by `url` (an RE2 pattern, searched anywhere in the URL as [crawler]
// include is), or by `origin` ("http[s]://host[:port]": the URLs of exactly
// that scheme, host and port), exactly one of the three; the first rule that
// matches a page is its rule. Intervals in seconds, 0: none; importance > 0
// replaces the page's importance (0: keep it). At least one of the
// intervals, importance, proxy or the request keys below is set.
struct RuleConfig {
  std::string name;  // unique; shown by /page
  std::string host;
  std::string url;
  std::string origin;
  double min_interval_s = 0;
  double max_interval_s = 0;
  double importance = 0;
  // Host rules only: "direct" or a proxy URL (as [fetch] proxy) for the
  // matching hosts' pages and robots.txt; "" = [fetch] proxy.
  std::string proxy;
  // Origin rules only: sent with every request to exactly that origin
  // (fetch/origin_credentials.h), never to another, never archived in
  // clear. Extra headers (name -> value), a Cookie header value, and an
  // Authorization from a file holding "basic USER:PASSWORD" or
  // "bearer TOKEN": `credentials_file` (a path) or `credential` (a file
  // name in systemd's $CREDENTIALS_DIRECTORY, LoadCredential=), not both.
  std::map<std::string, std::string> headers;
  std::string cookie;
  std::string credentials_file;
  std::string credential;

  bool operator==(const RuleConfig&) const = default;
};
// Bounds on [[rule]]: a page's rule is one byte (0: none); a URL pattern is
// compiled once per rule and searched in every URL.
inline constexpr size_t kMaxRules = 255;
inline constexpr size_t kMaxRulePatternBytes = 1024;
inline constexpr size_t kMaxRuleNameBytes = 64;
// Bounds on an origin rule's request keys.
inline constexpr size_t kMaxRuleHeaders = 16;
inline constexpr size_t kMaxRuleHeaderNameBytes = 64;
inline constexpr size_t kMaxRuleHeaderValueBytes = 4096;  // also the cookie

struct Config {
  CrawlerConfig crawler;
  BudgetConfig budget;
  PolitenessConfig politeness;
  FetchConfig fetch;
  SchedConfig sched;
  StoreConfig store;
  EngineConfig engine;
  FeedConfig feed;
  SiteFeedsConfig site_feeds;
  StatusConfig status;
  PushConfig push;
  LogConfig log;
  ClusterConfig cluster;
  std::vector<RuleConfig> rules;  // [[rule]], in file order

  bool operator==(const Config&) const = default;
};

// The sched policy names LoadConfig accepts.
const std::vector<std::string>& KnownPolicies();

// Reads and validates `path`. Errors: NotFound/IOError for the file,
// InvalidArgument with "file:line: [section] key: what" for its content.
Result<Config> LoadConfigFile(const std::string& path);

// The same for TOML text; `name` stands in for the file name in messages.
Result<Config> LoadConfigString(std::string_view toml, std::string_view name);

// Checks cross-field invariants of an already typed Config (also applied by
// the loaders). Message: "[section] key: what".
Status ValidateConfig(const Config& config);

// The config as TOML that LoadConfigString reads back to an equal Config.
std::string ConfigToToml(const Config& config);

// The User-Agent header value and the robots.txt product token.
std::string UserAgentHeader(const CrawlerConfig& crawler);
std::string RobotsProductToken(const CrawlerConfig& crawler);

}  // namespace freshd

#endif  // FRESHD_CONF_CONFIG_H_

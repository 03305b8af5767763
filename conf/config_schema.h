// The single list of config keys: VisitConfig walks every section and key of
// a Config, in file order, with its bounds. The TOML loader, the validator
// and the TOML writer are three visitors over this one list, so a key cannot
// be added to one of them and forgotten in another.
//
// A visitor provides:
//   void Section(const char* name);
//   void String(const char* key, S* v, const std::vector<std::string>& one_of);
//   void Int(const char* key, I* v, long long lo, long long hi);
//   void Double(const char* key, D* v, double lo, double hi);
//   void Bool(const char* key, B* v);
//   void Duration(const char* key, D* v, double lo, double hi);  // seconds
//   void Size(const char* key, U* v, uint64_t lo, uint64_t hi);   // bytes
//   void StringList(const char* key, L* v);
//   void StringMap(const char* key, M* v);
// where the pointee types are the Config members, const or not.

#ifndef FRESHD_CONF_CONFIG_SCHEMA_H_
#define FRESHD_CONF_CONFIG_SCHEMA_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "conf/config.h"

namespace freshd {

inline const std::vector<std::string>& KnownScopes() {
  static const std::vector<std::string> kScopes = {"seed-hosts", "seed-domains",
                                                   "any"};
  return kScopes;
}

inline const std::vector<std::string>& KnownRateModels() {
  static const std::vector<std::string> kModels = {"gamma", "mixture"};
  return kModels;
}

inline const std::vector<std::string>& KnownLogLevels() {
  static const std::vector<std::string> kLevels = {"trace", "debug", "info",
                                                   "warn",  "error", "off"};
  return kLevels;
}

// `C` is Config or const Config.
template <typename C, typename Visitor>
void VisitConfig(C& c, Visitor& v) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kYear = 365 * 86400.0;
  constexpr uint64_t kMaxBytes = uint64_t{1} << 40;
  const std::vector<std::string> any;

  v.Section("crawler");
  v.String("user_agent", &c.crawler.user_agent, any);
  v.String("contact_url", &c.crawler.contact_url, any);
  v.String("seeds", &c.crawler.seeds, any);
  v.String("scope", &c.crawler.scope, KnownScopes());
  v.StringList("include", &c.crawler.include);
  v.StringList("exclude", &c.crawler.exclude);
  v.Int("max_urls_per_host", &c.crawler.max_urls_per_host, 1, 1LL << 40);
  v.Int("max_new_urls_per_host_per_minute",
        &c.crawler.max_new_urls_per_host_per_minute, 0, 1LL << 24);
  v.Int("max_urls", &c.crawler.max_urls, 1, 1LL << 40);
  v.Int("gone_after_tries", &c.crawler.gone_after_tries, 0, 255);
  v.Duration("gone_after_unreachable", &c.crawler.gone_after_unreachable_s, 0,
             10 * kYear);
  v.Int("max_aliases", &c.crawler.max_aliases, 0, 1LL << 32);

  v.Section("budget");
  v.Double("rate", &c.budget.rate, 1e-9, 1e6);
  v.Double("burst", &c.budget.burst, 1, 1e6);

  v.Section("politeness");
  v.Duration("min_delay", &c.politeness.min_delay_s, 0, 86400);
  v.Duration("max_crawl_delay", &c.politeness.max_crawl_delay_s, 0, 86400);
  v.Int("max_in_flight_per_host", &c.politeness.max_in_flight_per_host, 1, 64);
  v.Bool("per_ip", &c.politeness.per_ip);
  v.Double("adaptive_delay_factor", &c.politeness.adaptive_delay_factor, 0,
           1000);
  v.Duration("backoff_initial", &c.politeness.backoff_initial_s, 0, 86400);
  v.Duration("backoff_max", &c.politeness.backoff_max_s, 0, 30 * 86400.0);
  v.Duration("robots_cache", &c.politeness.robots_cache_s, 1, 30 * 86400.0);

  v.Section("fetch");
  v.Duration("connect_timeout", &c.fetch.connect_timeout_s, 0.001, 3600);
  v.Duration("timeout", &c.fetch.timeout_s, 0.001, 3600);
  v.Size("low_speed_bytes", &c.fetch.low_speed_bytes, 0, kMaxBytes);
  v.Duration("low_speed_time", &c.fetch.low_speed_time_s, 0, 3600);
  v.Size("max_header_bytes", &c.fetch.max_header_bytes, 1024, 64ull << 20);
  v.Size("max_body_bytes", &c.fetch.max_body_bytes, 1, kMaxBytes);
  v.Size("max_decompressed_bytes", &c.fetch.max_decompressed_bytes, 1,
         kMaxBytes);
  v.Int("max_redirects", &c.fetch.max_redirects, 0, 50);
  v.Int("max_connections", &c.fetch.max_connections, 1, 100000);
  v.StringList("content_types", &c.fetch.content_types);
  v.Bool("allow_private_networks", &c.fetch.allow_private_networks);
  v.Bool("tls_verify", &c.fetch.tls_verify);
  v.String("ca_file", &c.fetch.ca_file, any);
  v.StringMap("resolve", &c.fetch.resolve);
  v.String("proxy", &c.fetch.proxy, any);
  v.String("proxy_credentials_file", &c.fetch.proxy_credentials_file, any);

  v.Section("sched");
  v.String("policy", &c.sched.policy, KnownPolicies());
  v.Int("shingle_k", &c.sched.shingle_k, 1, 32);
  v.Int("sketch_m", &c.sched.sketch_m, 1, 4096);
  v.Int("history", &c.sched.history, 1, 64);
  v.Double("new_page_value", &c.sched.new_page_value, 0, kInf);
  v.Double("risk_rho", &c.sched.risk_rho, 0, kInf);
  v.Double("learning_l", &c.sched.learning_l, 0, kInf);
  v.Duration("min_interval", &c.sched.min_interval_s, 0, kYear);
  v.Duration("max_interval", &c.sched.max_interval_s, 1, 10 * kYear);
  v.Duration("prior_change_interval", &c.sched.prior_change_interval_s, 1,
             10 * kYear);
  v.Duration("signal_window", &c.sched.signal_window_s, 0, kYear);
  v.Bool("value_over_rate_uncertainty", &c.sched.value_over_rate_uncertainty);
  v.String("rate_model", &c.sched.rate_model, KnownRateModels());
  v.Bool("explore", &c.sched.explore);

  v.Section("store");
  v.String("path", &c.store.path, any);
  v.Duration("sync_interval", &c.store.sync_interval_s, 0, 3600);
  v.Size("block_cache", &c.store.block_cache_bytes, 0, kMaxBytes);
  v.String("warc_dir", &c.store.warc_dir, any);
  v.Size("warc_rotate", &c.store.warc_rotate_bytes, 1 << 20, kMaxBytes);
  v.Bool("warc_dedup", &c.store.warc_dedup);
  v.Int("warc_dedup_entries", &c.store.warc_dedup_entries, 1, 1000000000);
  v.Bool("warc_errors", &c.store.warc_errors);

  v.Section("engine");
  v.Int("parse_threads", &c.engine.parse_threads, 0, 256);
  v.Size("queue_bytes", &c.engine.queue_bytes, 1 << 20, kMaxBytes);

  v.Section("feed");
  v.Bool("enabled", &c.feed.enabled);
  v.Int("max_events", &c.feed.max_events, 1, 1000000000);
  v.Duration("max_age", &c.feed.max_age_s, 60, 3650 * 86400.0);

  v.Section("site_feeds");
  v.Bool("enabled", &c.site_feeds.enabled);
  v.Int("max_per_host", &c.site_feeds.max_per_host, 1, 64);
  v.Int("max_total", &c.site_feeds.max_total, 1, 10000000);
  v.Duration("poll_interval", &c.site_feeds.poll_interval_s, 1, 30 * 86400.0);
  v.Int("max_entries", &c.site_feeds.max_entries, 1, 50000);
  v.Size("max_bytes", &c.site_feeds.max_bytes, 1024, 256ull << 20);

  v.Section("status");
  v.String("listen", &c.status.listen, any);
  v.StringList("allowed_hosts", &c.status.allowed_hosts);
  v.String("token_file", &c.status.token_file, any);

  v.Section("push");
  v.String("listen", &c.push.listen, any);
  v.String("public_url", &c.push.public_url, any);
  v.StringList("trusted_proxies", &c.push.trusted_proxies);
  v.Size("max_body_bytes", &c.push.max_body_bytes, 1024, 64ull << 20);
  v.Int("max_connections", &c.push.max_connections, 1, 100000);
  v.Int("max_connections_per_client", &c.push.max_connections_per_client, 1,
        100000);
  v.Int("client_requests_per_minute", &c.push.client_requests_per_minute, 1,
        1000000);
  v.Int("host_requests_per_minute", &c.push.host_requests_per_minute, 1,
        1000000);
  v.Duration("header_timeout", &c.push.header_timeout_s, 0.1, 600);
  v.Duration("body_timeout", &c.push.body_timeout_s, 0.1, 600);
  v.Duration("key_cache", &c.push.key_cache_s, 1, 30 * 86400.0);
  v.Int("max_pending_per_host", &c.push.max_pending_per_host, 1, 1000000);
  v.Int("websub_max_subscriptions", &c.push.websub_max_subscriptions, 0,
        1000000);
  v.Duration("websub_lease", &c.push.websub_lease_s, 60, 365 * 86400.0);
  v.Duration("websub_min_renew_interval", &c.push.websub_min_renew_interval_s,
             1, 86400);
  v.Double("websub_poll_slowdown", &c.push.websub_poll_slowdown, 1, 1000);

  v.Section("log");
  v.String("level", &c.log.level, KnownLogLevels());
  v.Duration("progress", &c.log.progress_s, 0, 86400);

  v.Section("cluster");
  v.String("nats_url", &c.cluster.nats_url, any);
  v.String("node", &c.cluster.node, any);
  v.Int("shards", &c.cluster.shards, 1, 65536);
  v.Duration("heartbeat", &c.cluster.heartbeat_s, 0.05, 3600);
  v.Duration("ttl", &c.cluster.ttl_s, 0.1, 86400);
  v.Duration("changes_max_age", &c.cluster.changes_max_age_s, 60,
             3650 * 86400.0);
  v.Size("changes_max_bytes", &c.cluster.changes_max_bytes, 1 << 20,
         uint64_t{1} << 40);
}

// The keys of one [[rule]] but its name (read first: messages name the rule),
// without a Section() call: the caller names the section (the rule's name in
// messages; the writer's [[rule]] header).
template <typename R, typename Visitor>
void VisitRule(R& r, Visitor& v) {
  constexpr double kYear = 365 * 86400.0;
  const std::vector<std::string> any;
  v.String("host", &r.host, any);
  v.String("url", &r.url, any);
  v.String("origin", &r.origin, any);
  v.Duration("min_interval", &r.min_interval_s, 0, 10 * kYear);
  v.Duration("max_interval", &r.max_interval_s, 0, 10 * kYear);
  v.Double("importance", &r.importance, 0, 1e6);
  v.String("proxy", &r.proxy, any);
  v.StringMap("headers", &r.headers);
  v.String("cookie", &r.cookie, any);
  v.String("credentials_file", &r.credentials_file, any);
  v.String("credential", &r.credential, any);
}

}  // namespace freshd

#endif  // FRESHD_CONF_CONFIG_SCHEMA_H_

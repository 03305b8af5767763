// HttpFetcher: single-hop HTTP(S) GETs on libcurl's multi interface, driven
// by a Boost.Asio io_context through CURLMOPT_SOCKETFUNCTION/TIMERFUNCTION
// (curl's "asiohiper" pattern): every socket and timer wait is an Asio
// operation on the caller's event-loop thread, so one thread runs any number
// of transfers. Connections are pooled and reused (per multi handle:
// FetcherOptions::origins_per_multi_handle); HTTP/2 is negotiated over
// TLS (ALPN) when the server offers it; TLS peers are verified against the
// system CA store (OpenSSL), or the PEM bundle [fetch] ca_file, unless
// [fetch] tls_verify = false. Internals: easy_setup.h (curl options),
// response_reader.h (callbacks), transfer_result.h (outcome classes).
//
// Enforced per request ([fetch] config): connect/total timeouts, a low-speed
// cut-off (fewer than low_speed_bytes/s over low_speed_time_s), header bytes,
// body bytes, decoded bytes (gzip/deflate/br decoded here, streaming, so a
// bomb stops at the cap), accepted content types, http/https only. The SSRF
// guard (fetch/address_guard.h) runs in CURLOPT_OPENSOCKETFUNCTION on the
// resolved address of every connection. Through an egress proxy
// (proxy_routes.h) the fetcher resolves the target itself (the [fetch]
// resolve table, an IP literal, or an async lookup), lets the SSRF guard
// judge that address and pins it: an HTTP(S) proxy gets a CONNECT tunnel to
// "ip:port" (plain http too), a socks5 proxy the address, so the proxy
// never resolves a name; the proxy's own address is exempt from the guard.
// A failing proxy (refused, 407, CONNECT refused) is reported as kProxy.
// A request to an origin that a [[rule]] names gets that rule's headers,
// cookie and Authorization (origin_credentials.h), decided per transfer by
// its own origin; the request head kept for WARC has their values redacted.
// Redirects are NOT followed: a 3xx is
// reported as kRedirect with its absolute `location`, so the caller (Crawler)
// can put every hop through robots.txt and the politeness gate.
//
// Thread-safety: not thread-safe; call everything on the io_context's thread
// (or before it runs). Callbacks run on that thread, never inside Fetch().

#ifndef FRESHD_FETCH_HTTP_FETCHER_H_
#define FRESHD_FETCH_HTTP_FETCHER_H_

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "fetch/outcome.h"
#include "fetch/proxy_routes.h"

namespace freshd::fetch {

struct FetcherOptions {
  FetchConfig config;
  std::string user_agent = "freshd/0.1";  // full User-Agent header value
  // TEST-only: exact "ip:port" endpoints the SSRF guard lets through even
  // when allow_private_networks is false (see AddressGuard).
  std::vector<std::string> exempt_endpoints;
  // Origins (scheme, host, port) one curl multi handle serves before a new
  // one takes the next transfers; the old one finishes its own and is
  // closed. curl 7.88 walks its whole DNS cache at the end of every
  // transfer and leaves an empty entry in its connection cache for each
  // host whose idle connection it evicts, walked at every later eviction:
  // on one handle the cost of a transfer grows with the hosts it has seen
  // (bench/fetch/curl_hosts_bench: 7,320 -> 258 transfers/s over 50,000
  // hosts; with a new handle every 1,000 hosts, 10.7k-14.7k throughout).
  // A crawl of fewer origins keeps one handle and all its connections. At
  // most 4 handles are open at once (each up to max_connections sockets):
  // at that cap the newest serves on until an older one has finished.
  size_t origins_per_multi_handle = 1024;
  // Per-host overrides of [fetch] proxy, from [[rule]] host rules
  // (HostProxiesFromRules): "direct" or a proxy URL.
  std::vector<HostProxy> host_proxies;
  // The [[rule]]s with an origin: their request headers and credentials
  // (origin_credentials.h), read when the fetcher is created; and
  // $CREDENTIALS_DIRECTORY, where a rule's `credential` is.
  std::vector<RuleConfig> origin_rules;
  std::string credentials_directory;
};

struct FetchRequest {
  std::string url;
  std::string etag;               // sent as If-None-Match when not empty
  std::string last_modified;      // sent as If-Modified-Since when not empty
  bool any_content_type = false;  // skip the content-type check (robots.txt)
  std::optional<uint64_t> max_body_bytes;  // overrides [fetch] max_body_bytes
  bool truncate_ok = false;  // at the body limit keep what came, outcome ok
  bool keep_raw = false;     // keep the encoded body in FetchResult.raw_body
  // Leave a 2xx body's Content-Encoding undone: FetchResult.body holds the
  // wire bytes (max_body_bytes still applies) and content_encoding names
  // the coding, so that the caller decodes on another thread.
  bool defer_decoding = false;
  // Not empty: POST this body as application/x-www-form-urlencoded.
  std::string form_body;
  // Called once, on the event-loop thread, when the connection is up and
  // the request is about to go on the wire (CURLOPT_PREREQFUNCTION).
  std::function<void()> on_request_sent;
};

class HttpFetcher {
 public:
  using Callback = std::function<void(FetchResult)>;

  // Builds a fetcher bound to `io`, which must outlive it. Fails with
  // Internal if libcurl cannot be initialised.
  static Result<std::unique_ptr<HttpFetcher>> Create(
      boost::asio::io_context& io, FetcherOptions options);

  // Aborts transfers still running; their callbacks are not called.
  ~HttpFetcher();
  HttpFetcher(const HttpFetcher&) = delete;
  HttpFetcher& operator=(const HttpFetcher&) = delete;

  // Starts one GET. `done` is called exactly once, on the io_context thread,
  // with the typed result (never from inside Fetch). At most [fetch]
  // max_connections transfers are handed to curl at once; the rest wait in
  // a FIFO here and start as transfers end. (curl 7.88 keeps the transfers
  // over its connection limit on a list that every removal walks: 100k
  // robots.txt fetches handed to it at once held the network thread for
  // minutes.) Their timeouts and low-speed windows start when they do. The
  // FIFO holds what callers hand in beyond that: the Crawler one transfer a
  // host at a time (its politeness gate), the daemon its pages within
  // max_connections, its robots.txt refresh a slice a turn.
  void Fetch(FetchRequest request, Callback done);

  // Transfers requested and not yet completed (running or waiting).
  size_t in_flight() const;
  // Of those, the ones handed to curl (≤ max_connections).
  size_t running() const;
  // curl multi handles open now (the newest and those finishing their
  // transfers), and opened since the start.
  size_t multi_handles() const;
  uint64_t multi_handles_opened() const;

  const FetcherOptions& options() const;

 private:
  class Impl;
  explicit HttpFetcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Parses a Retry-After value: delta-seconds or an HTTP-date (RFC 9110
// §10.2.3), relative to `now_unix` for dates. nullopt if unparsable; never
// negative.
std::optional<double> ParseRetryAfter(const std::string& value,
                                      int64_t now_unix);

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_HTTP_FETCHER_H_

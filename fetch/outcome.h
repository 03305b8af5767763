// The typed result of one fetch: an outcome class the scheduler (sched/) and
// the politeness gate understand, plus the response facts freshd records.
//
// Classes follow issue #5: ok, not-modified, redirect (one hop, only seen
// below the Crawler), 4xx, 5xx, network, dns, tls, timeout, too-large,
// robots-denied, redirect-loop, plus blocked-address (SSRF guard),
// bad-content-type, bad-redirect (non-http(s) target), bad-url,
// bad-encoding and protocol (the server's reply is not valid HTTP). Names are
// stable strings (JSON output, metrics labels). Plain values:
// thread-compatible.

#ifndef FRESHD_FETCH_OUTCOME_H_
#define FRESHD_FETCH_OUTCOME_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace freshd::fetch {

enum class OutcomeClass {
  kOk,              // 2xx with an accepted content type, body complete
  kNotModified,     // 304: the page is unchanged, no body
  kRedirect,        // 3xx with a Location (single hop; Crawler follows)
  kHttp4xx,         // 4xx (429 included: the gate also backs off)
  kHttp5xx,         // 5xx
  kNetwork,         // connection refused/reset, bad HTTP, other transport
  kDns,             // name did not resolve
  kTls,             // handshake or certificate verification failed
  kTimeout,         // connect, total or low-speed timeout
  kTooLarge,        // header, body or decompressed-size limit hit
  kRobotsDenied,    // robots.txt disallows the URL (never contacted)
  kRedirectLoop,    // a redirect revisited a URL or exceeded max_redirects
  kBlockedAddress,  // SSRF guard: destination address not allowed
  kBadContentType,  // 2xx whose Content-Type is not accepted
  kBadRedirect,     // redirect to a non-http(s) or unparsable target
  kBadUrl,          // the URL itself is unusable (scheme, syntax)
  kBadEncoding,     // Content-Encoding unknown or the stream is corrupt
  kProtocol,        // the reply is not HTTP: no status line (HTTP/0.9),
                    // a malformed status line or header, HTTP/2 framing
  kProxy,           // the egress proxy failed (refused, 407, CONNECT
                    // refused): the proxy's error, not the target host's
};

// The last class, for loops over every class (counters from zero).
inline constexpr OutcomeClass kLastOutcomeClass = OutcomeClass::kProxy;

// "ok", "not-modified", "redirect", "4xx", "5xx", "network", "dns", "tls",
// "timeout", "too-large", "robots-denied", "redirect-loop",
// "blocked-address", "bad-content-type", "bad-redirect", "bad-url",
// "bad-encoding", "protocol", "proxy".
std::string_view OutcomeName(OutcomeClass c);

// True for outcomes that count as a host error for back-off: 5xx, 429,
// network, dns, tls, timeout, protocol.
bool IsHostError(OutcomeClass c, int http_status);

// A response of a redirect chain that was followed (not the last), kept
// with keep_raw so that it can be archived (daemon/warc_archive.h).
struct RawHop {
  std::string url;  // the URL this hop requested
  std::string raw_request, raw_headers, raw_body, remote_ip;
};

struct FetchResult {
  std::string url;        // as requested
  std::string final_url;  // after redirects (Crawler) or == url
  OutcomeClass outcome = OutcomeClass::kNetwork;
  int status = 0;              // HTTP status of the last response, 0 if none
  std::string detail;          // human-readable reason for non-ok outcomes
  uint64_t bytes = 0;          // body bytes received on the wire (encoded)
  double elapsed_s = 0;        // request start to completion (last hop)
  double total_elapsed_s = 0;  // including robots, politeness waits, hops
  int redirects = 0;
  std::string content_type;  // media type, lower case, no parameters
  std::string etag;          // validators for the next conditional GET
  std::string last_modified;
  std::string location;                 // absolute redirect target (3xx)
  std::optional<double> retry_after_s;  // from Retry-After, relative
  std::string body;  // decoded body (empty for 304 and errors);
                     // still encoded when content_encoding is set
  // The Content-Encoding left undone (FetchRequest::defer_decoding): "gzip",
  // "deflate" or "br"; DecodeDeferredBody (fetch/deferred_body.h) decodes.
  std::string content_encoding;
  bool truncated = false;    // body cut at a truncate-ok limit (robots)
  std::string raw_headers;   // status line + header block as received
  std::string raw_body;      // encoded body; only if keep_raw requested
  std::string raw_request;   // request head as sent (keep_raw only; HTTP/2
                             // is shown in curl's HTTP/1-style rendering)
  std::string remote_ip;     // address actually connected to
  std::string http_version;  // "1.0", "1.1", "2" or "3"; "" if no response
  int new_connections = 0;   // connections this transfer opened (0: reused)
  // keep_raw (Crawler): the redirect responses followed before this one,
  // in order, each with its request.
  std::vector<RawHop> redirect_hops;
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_OUTCOME_H_

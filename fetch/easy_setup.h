// Building the curl easy handle of one HttpFetcher transfer: the URL check
// (http/https with a host), every option that enforces [fetch] config
// (timeouts, TLS verification and ca_file, HTTP/2 over TLS, no proxy but
// the configured one, no redirect following, no curl-side decoding), request
// headers (User-Agent, Accept-Encoding, conditional GET validators, an
// origin rule's headers and credentials for t->origin only), the
// [fetch] resolve override, the response/debug callbacks of response_reader.h,
// and the SSRF guard in CURLOPT_OPENSOCKETFUNCTION; through an egress proxy,
// the tunnel to the pinned target address and the proxy credentials.
// Thread-safety: call on the event-loop thread.

#ifndef FRESHD_FETCH_EASY_SETUP_H_
#define FRESHD_FETCH_EASY_SETUP_H_

#include <string>

#include "fetch/transfer.h"

namespace freshd::fetch {

// Scheme (lower case), host (lower case) and port (default filled in).
struct TargetParts {
  std::string scheme, host, port;
};

// Parses an http(s) URL. On failure returns false and sets *why.
bool ParseTarget(const std::string& url, TargetParts* parts, std::string* why);

// Creates t->easy and sets every option for t->req against `target`
// (t->env must be set). Returns false if curl_easy_init fails.
// With t->proxy set, the proxy options are set too (tunnel, credentials)
// and the transfer must not start before PinTarget.
bool SetUpEasy(Transfer* t, const TargetParts& target);

// Through a proxy: connect (CONNECT tunnel or socks5) to `ip` (the target's
// address, already judged by the SSRF guard) instead of the URL's name.
void PinTarget(Transfer* t, const TargetParts& target, const std::string& ip);

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_EASY_SETUP_H_

// Building the curl easy handle of one HttpFetcher transfer: the URL check
// (http/https with a host), every option that enforces [fetch] config
// (timeouts, TLS verification and ca_file, HTTP/2 over TLS, no proxy, no
// redirect following, no curl-side decoding), request headers (User-Agent,
// Accept-Encoding, conditional GET validators), the [fetch] resolve
// override, the response/debug callbacks of response_reader.h, and the SSRF
// guard in CURLOPT_OPENSOCKETFUNCTION.
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
bool SetUpEasy(Transfer* t, const TargetParts& target);

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_EASY_SETUP_H_

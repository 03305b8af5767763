// Turning a finished HttpFetcher transfer into its typed FetchResult: the
// outcome class from our abort reason (limits, content type, encoding, low
// speed), else from curl's result code (dns, timeout, tls, network, SSRF
// refusal) or the HTTP status (ok, not-modified, redirect, 4xx, 5xx), plus
// the connection facts curl reports (remote IP, HTTP version, whether a
// new connection was opened) and the elapsed time.
// Thread-safety: call on the event-loop thread.

#ifndef FRESHD_FETCH_TRANSFER_RESULT_H_
#define FRESHD_FETCH_TRANSFER_RESULT_H_

#include <curl/curl.h>

#include <string>

#include "fetch/transfer.h"

namespace freshd::fetch {

// Moves t->result out, completed. `code` is curl's result for the transfer
// (CURLE_OPERATION_TIMEDOUT for our low-speed cut). t->easy must still be
// valid (not yet cleaned up).
FetchResult TakeResult(Transfer* t, CURLcode code);

// "1.0", "1.1", "2", "3" for CURLINFO_HTTP_VERSION values, "" otherwise.
std::string HttpVersionName(long curl_http_version);

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_TRANSFER_RESULT_H_

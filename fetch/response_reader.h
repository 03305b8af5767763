// The response side of one HttpFetcher transfer: curl's header, body and
// debug callbacks. They parse the status line and the header fields freshd
// records (Content-Type, ETag, Last-Modified, Retry-After, Content-Encoding,
// Content-Length, Location), enforce max_header_bytes, max_body_bytes,
// accepted content types and the decoded-size cap (ContentDecoder), and
// capture the request head curl sent (keep_raw). A callback that stops the
// transfer sets Transfer::abort and returns the value that makes curl fail.
// Thread-safety: curl calls these on the event-loop thread.

#ifndef FRESHD_FETCH_RESPONSE_READER_H_
#define FRESHD_FETCH_RESPONSE_READER_H_

#include <curl/curl.h>

#include <cstddef>

#include "fetch/transfer.h"

namespace freshd::fetch {

// A decoded body is kept in parts of about this size until it is complete.
inline constexpr size_t kBodyPartBytes = 1024 * 1024;

// Request heads longer than this are not captured (ours are < 1 KiB).
inline constexpr size_t kMaxRequestHeadBytes = 64 * 1024;

// CURLOPT_HEADERFUNCTION (userp: Transfer*): one header line per call.
size_t HeaderCb(char* data, size_t size, size_t n, void* userp);
// CURLOPT_WRITEFUNCTION (userp: Transfer*): body bytes as they arrive.
size_t WriteCb(char* data, size_t size, size_t n, void* userp);
// One decode turn for `t` (posted by schedule_decode): decodes up to
// kDecodeSliceBytes more. False when the body must be refused (t.abort set).
bool DecodeMore(Transfer& t);
// CURLOPT_PREREQFUNCTION (clientp: Transfer*): the connection is up and the
// request goes out now: calls req.on_request_sent, once.
int PrereqCb(void* clientp, char* primary_ip, char* local_ip, int primary_port,
             int local_port);
// CURLOPT_DEBUGFUNCTION (userp: Transfer*): keeps CURLINFO_HEADER_OUT in
// result.raw_request (the last complete head if curl re-sends).
int DebugCb(CURL* easy, curl_infotype type, char* data, size_t size,
            void* userp);

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_RESPONSE_READER_H_

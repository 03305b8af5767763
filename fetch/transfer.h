// Transfer: the state of one HttpFetcher GET while curl runs it, shared by
// the pieces of the fetcher (internal to fetch/, not a public API):
//   easy_setup.h      builds the curl easy handle for a Transfer;
//   response_reader.h curl's header/body/debug callbacks fill it in;
//   transfer_result.h turns the finished Transfer into a FetchResult;
//   http_fetcher.cc   owns the Transfers and drives them on the event loop.
// Thread-safety: a Transfer is used on the event-loop thread only.

#ifndef FRESHD_FETCH_TRANSFER_H_
#define FRESHD_FETCH_TRANSFER_H_

#include <curl/curl.h>

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "conf/config.h"
#include "fetch/address_guard.h"
#include "fetch/content_decoder.h"
#include "fetch/curl_multi_loop.h"
#include "fetch/http_fetcher.h"
#include "fetch/origin_credentials.h"
#include "fetch/outcome.h"
#include "fetch/proxy_routes.h"

namespace freshd::fetch {

// Why a transfer was stopped by one of our callbacks (curl then reports a
// write error or the fetcher removes the handle itself).
enum class Abort {
  kNone,
  kHeaderTooLarge,
  kBodyTooLarge,
  kDecodedTooLarge,
  kBadContentType,
  kBadEncoding,
  kTruncated,  // truncate_ok limit reached: a success
  kLowSpeed,
};

// What every transfer of one fetcher shares; owned by the fetcher.
struct TransferEnv {
  const FetcherOptions* options = nullptr;
  std::vector<std::string> accepted_types;  // lower case
  const AddressGuard* guard = nullptr;
  const ProxyRoutes* proxies = nullptr;
  const OriginCredentials* credentials = nullptr;  // never null
  // Tells every multi loop of the fetcher that curl opened `fd`
  // (CurlMultiLoop::NoteSocketOpened): a number one loop saw closed behind
  // its back may now be another loop's socket.
  std::function<void(curl_socket_t fd)> note_socket_opened;
  // Posts a later event-loop turn that decodes more of transfer `id`'s
  // held-back body (ContentDecoder::has_pending).
  std::function<void(uint64_t id)> schedule_decode;
};

struct Transfer {
  const TransferEnv* env = nullptr;
  uint64_t id = 0;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  curl_slist* resolve = nullptr;
  FetchRequest req;
  std::string origin;             // "scheme://host:port", lower case
  CurlMultiLoop* loop = nullptr;  // the one it was handed to (when on_curl)
  HttpFetcher::Callback done;
  FetchResult result;
  std::chrono::steady_clock::time_point start;
  uint64_t max_body = 0;
  uint64_t header_bytes = 0;
  uint64_t window_bytes = 0;  // received since the last low-speed check
  bool headers_done = false;
  uint64_t content_length = 0;
  bool has_content_length = false;
  std::string content_encoding;
  std::unique_ptr<ContentDecoder> decoder;
  // The decoded body in parts of about kBodyPartBytes (response_reader.h),
  // joined when the transfer is reported ok: growing one string to a bomb's
  // 50 MiB would copy and page-fault it in single event-loop turns.
  std::vector<std::string> body_parts;
  bool decode_scheduled = false;  // a decode turn is posted
  // curl finished while the decoder still had input: the fetcher reports the
  // transfer once the decoder has drained, with this code.
  bool curl_done = false;
  bool on_curl = false;  // added to the multi handle and not removed
  CURLcode curl_code = CURLE_OK;
  Abort abort = Abort::kNone;
  std::string blocked;  // endpoint refused by the SSRF guard
  std::string proxy;    // egress proxy URL ("" = direct)
  std::string pinned;   // through a proxy: the target's checked IP
  std::unique_ptr<boost::asio::steady_timer> speed_timer;
  char error[CURL_ERROR_SIZE] = {};

  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  ~Transfer() { Cleanup(); }

  // Cancels the speed timer and frees the easy handle and header lists.
  // REQUIRES: the easy handle is no longer in the multi handle.
  void Cleanup() {
    if (speed_timer) speed_timer->cancel();
    if (easy != nullptr) curl_easy_cleanup(easy);
    easy = nullptr;
    curl_slist_free_all(headers);
    curl_slist_free_all(resolve);
    headers = resolve = nullptr;
  }
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_TRANSFER_H_

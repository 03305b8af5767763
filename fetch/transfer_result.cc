#include "fetch/transfer_result.h"

#include <chrono>

namespace freshd::fetch {

namespace {

// The outcome of a transfer one of our callbacks stopped.
void ClassifyAbort(const Transfer& t, FetchResult* r) {
  const FetchConfig& c = t.env->options->config;
  switch (t.abort) {
    case Abort::kHeaderTooLarge:
      r->outcome = OutcomeClass::kTooLarge;
      r->detail = "response headers exceed max_header_bytes (" +
                  std::to_string(c.max_header_bytes) + ")";
      break;
    case Abort::kBodyTooLarge:
      r->outcome = OutcomeClass::kTooLarge;
      r->detail =
          "body exceeds max_body_bytes (" + std::to_string(t.max_body) + ")";
      break;
    case Abort::kDecodedTooLarge:
      r->outcome = OutcomeClass::kTooLarge;
      r->detail = "decoded body exceeds max_decompressed_bytes (" +
                  std::to_string(c.max_decompressed_bytes) + ")";
      break;
    case Abort::kBadContentType:
      r->outcome = OutcomeClass::kBadContentType;
      r->detail = "content type '" + r->content_type + "' is not accepted";
      break;
    case Abort::kBadEncoding:
      r->outcome = OutcomeClass::kBadEncoding;
      r->detail = "unsupported or corrupt Content-Encoding '" +
                  t.content_encoding + "'";
      break;
    case Abort::kLowSpeed:
      r->outcome = OutcomeClass::kTimeout;
      r->detail = "low speed: under " + std::to_string(c.low_speed_bytes) +
                  " bytes/s for " + std::to_string(c.low_speed_time_s) + " s";
      break;
    case Abort::kTruncated:
      r->outcome = OutcomeClass::kOk;
      r->truncated = true;
      break;
    case Abort::kNone:
      break;
  }
}

// A complete HTTP response: the class of its status.
void ClassifyStatus(CURL* easy, FetchResult* r) {
  int s = r->status;
  if (s >= 300 && s < 400 && r->location.empty()) {
    char* loc = nullptr;
    if (curl_easy_getinfo(easy, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK &&
        loc != nullptr) {
      r->location = loc;
    }
  }
  if (s == 304) {
    r->outcome = OutcomeClass::kNotModified;
  } else if (s >= 200 && s < 300) {
    r->outcome = OutcomeClass::kOk;
  } else if (s >= 300 && s < 400) {
    r->outcome = r->location.empty() ? OutcomeClass::kBadRedirect
                                     : OutcomeClass::kRedirect;
    if (r->location.empty()) r->detail = "redirect without a usable Location";
  } else if (s >= 400 && s < 500) {
    r->outcome = OutcomeClass::kHttp4xx;
  } else if (s >= 500 && s < 600) {
    r->outcome = OutcomeClass::kHttp5xx;
  } else {
    r->outcome = OutcomeClass::kNetwork;
    r->detail = "unexpected HTTP status " + std::to_string(s);
  }
}

// Through a proxy, the failures that are the proxy's own: it cannot be
// reached, it refused the CONNECT (407 included), or its socks5 handshake
// failed for a reason other than the target being unreachable.
void ClassifyProxyFailure(const Transfer& t, CURLcode code, FetchResult* r) {
  long connect_code = 0;
  curl_easy_getinfo(t.easy, CURLINFO_HTTP_CONNECTCODE, &connect_code);
  if (connect_code >= 300) {
    r->outcome = OutcomeClass::kProxy;
    r->detail = "the proxy answered the CONNECT with " +
                std::to_string(connect_code) +
                (connect_code == 407 ? " (proxy authentication failed)" : "");
    return;
  }
  if (code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_PROXY ||
      code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR) {
    if (connect_code == 0) {  // no tunnel was ever set up
      r->outcome = OutcomeClass::kProxy;
      r->detail = "proxy: " + r->detail;
    }
    return;
  }
  if (code == CURLE_PROXY) {
    long px = 0;
    curl_easy_getinfo(t.easy, CURLINFO_PROXY_ERROR, &px);
    const bool target_unreachable = px == CURLPX_REPLY_CONNECTION_REFUSED ||
                                    px == CURLPX_REPLY_HOST_UNREACHABLE ||
                                    px == CURLPX_REPLY_NETWORK_UNREACHABLE ||
                                    px == CURLPX_REPLY_TTL_EXPIRED;
    r->outcome =
        target_unreachable ? OutcomeClass::kNetwork : OutcomeClass::kProxy;
    r->detail = "proxy: " + r->detail;
  }
}

// A transport failure: the class of curl's error code.
void ClassifyCurlError(const Transfer& t, CURLcode code, FetchResult* r) {
  r->detail = t.error[0] != '\0' ? t.error : curl_easy_strerror(code);
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
      r->outcome = OutcomeClass::kDns;
      break;
    case CURLE_OPERATION_TIMEDOUT:
      r->outcome = OutcomeClass::kTimeout;
      break;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_INITFAILED:
      r->outcome = OutcomeClass::kTls;
      break;
    case CURLE_UNSUPPORTED_PROTOCOL:
      // Also curl's answer to a reply without a status line ("Received
      // HTTP/0.9 when not allowed"): once connected, the URL was fine.
      r->outcome = r->remote_ip.empty() ? OutcomeClass::kBadUrl
                                        : OutcomeClass::kProtocol;
      break;
    case CURLE_URL_MALFORMAT:
      r->outcome = OutcomeClass::kBadUrl;
      break;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
      r->outcome = OutcomeClass::kProtocol;
      break;
    case CURLE_OUT_OF_MEMORY:
      // curl refuses to buffer one header line over CURL_MAX_HTTP_HEADER
      // (100 KiB) this way; it never reaches max_header_bytes's callback.
      if (!t.headers_done) {
        r->outcome = OutcomeClass::kTooLarge;
        r->detail =
            "a response header line exceeds 100 KiB (" + r->detail + ")";
      } else {
        r->outcome = OutcomeClass::kNetwork;
      }
      break;
    default:
      r->outcome = OutcomeClass::kNetwork;
      break;
  }
  if (!t.blocked.empty() && code == CURLE_COULDNT_CONNECT) {
    r->outcome = OutcomeClass::kBlockedAddress;
    r->detail = "refused to connect to non-public address " + t.blocked +
                " ([fetch] allow_private_networks = false)";
  }
  if (!t.proxy.empty()) ClassifyProxyFailure(t, code, r);
}

}  // namespace

std::string HttpVersionName(long v) {
  switch (v) {
    case CURL_HTTP_VERSION_1_0:
      return "1.0";
    case CURL_HTTP_VERSION_1_1:
      return "1.1";
    case CURL_HTTP_VERSION_2_0:
      return "2";
    case CURL_HTTP_VERSION_3:
      return "3";
    default:
      return "";
  }
}

FetchResult TakeResult(Transfer* t, CURLcode code) {
  FetchResult r = std::move(t->result);
  r.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t->start)
          .count();
  r.total_elapsed_s = r.elapsed_s;
  char* ip = nullptr;
  if (curl_easy_getinfo(t->easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip) {
    r.remote_ip = ip;
  }
  if (!t->pinned.empty()) r.remote_ip = t->pinned;  // the target, not proxy
  long version = 0;
  if (curl_easy_getinfo(t->easy, CURLINFO_HTTP_VERSION, &version) == CURLE_OK) {
    r.http_version = HttpVersionName(version);
  }
  long connects = 0;
  if (curl_easy_getinfo(t->easy, CURLINFO_NUM_CONNECTS, &connects) ==
      CURLE_OK) {
    r.new_connections = static_cast<int>(connects);
  }
  if (t->abort != Abort::kNone) {
    ClassifyAbort(*t, &r);
  } else if (code == CURLE_OK) {
    ClassifyStatus(t->easy, &r);
  } else {
    ClassifyCurlError(*t, code, &r);
  }
  if (r.outcome != OutcomeClass::kOk) {
    r.body.clear();
  } else {
    r.body = JoinParts(std::move(t->body_parts));
  }
  t->body_parts.clear();
  if (!r.raw_request.empty()) {
    r.raw_request = t->env->credentials->Redact(r.raw_request);
  }
  return r;
}

}  // namespace freshd::fetch

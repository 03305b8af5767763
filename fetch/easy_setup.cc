#include "fetch/easy_setup.h"

#include <sys/socket.h>

#include <algorithm>
#include <cmath>

#include "fetch/http_text.h"
#include "fetch/response_reader.h"

namespace freshd::fetch {

namespace {

// Runs for every connection curl opens: the SSRF guard sees the address
// actually connected to (after DNS and [fetch] resolve), on every hop.
curl_socket_t OpenSocketCb(void* clientp, curlsocktype purpose,
                           curl_sockaddr* addr) {
  auto* t = static_cast<Transfer*>(clientp);
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  const auto* sa = reinterpret_cast<const sockaddr*>(&addr->addr);
  // Through a proxy the only connection is to the proxy (exempt: the
  // operator named it); the target was judged before (PinTarget).
  if (t->proxy.empty() && !t->env->guard->Allows(sa, addr->addrlen)) {
    t->blocked = FormatSocketAddress(sa, addr->addrlen);
    return CURL_SOCKET_BAD;
  }
  curl_socket_t fd =
      ::socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
  if (fd != CURL_SOCKET_BAD) t->env->note_socket_opened(fd);
  return fd;
}

long Millis(double seconds) {
  return static_cast<long>(std::ceil(seconds * 1000));
}

}  // namespace

bool ParseTarget(const std::string& url, TargetParts* parts, std::string* why) {
  CURLU* u = curl_url();
  bool parsed = u != nullptr &&
                curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK;
  char* scheme = nullptr;
  char* host = nullptr;
  char* port = nullptr;
  if (parsed) {
    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    curl_url_get(u, CURLUPART_HOST, &host, 0);
    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
  }
  parts->scheme = scheme ? AsciiLowerCopy(scheme) : "";
  parts->host = host ? AsciiLowerCopy(host) : "";
  parts->port = port ? port : "";
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(u);
  if (!parsed || (parts->scheme != "http" && parts->scheme != "https") ||
      parts->host.empty()) {
    *why = parsed ? "only http and https URLs are fetched" : "unparsable URL";
    return false;
  }
  return true;
}

bool SetUpEasy(Transfer* t, const TargetParts& target) {
  t->easy = curl_easy_init();
  if (t->easy == nullptr) return false;
  const FetcherOptions& o = *t->env->options;
  const FetchConfig& c = o.config;
  CURL* e = t->easy;
  curl_easy_setopt(e, CURLOPT_URL, t->req.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, t);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  // Never an environment proxy; a configured one only with PinTarget.
  curl_easy_setopt(e, CURLOPT_PROXY, t->proxy.c_str());
  if (!t->proxy.empty()) {
    const ProxyRoutes& p = *t->env->proxies;
    // A tunnel for plain http too: the proxy then only ever sees
    // "CONNECT ip:port" (CONNECT_TO, set by PinTarget), never a name.
    curl_easy_setopt(e, CURLOPT_HTTPPROXYTUNNEL, 1L);
    curl_easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    if (!p.user().empty()) {
      curl_easy_setopt(e, CURLOPT_PROXYUSERNAME, p.user().c_str());
      curl_easy_setopt(e, CURLOPT_PROXYPASSWORD, p.password().c_str());
      curl_easy_setopt(e, CURLOPT_PROXYAUTH, static_cast<long>(CURLAUTH_BASIC));
    }
    curl_easy_setopt(e, CURLOPT_PROXY_SSL_VERIFYPEER, c.tls_verify ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_PROXY_SSL_VERIFYHOST, c.tls_verify ? 2L : 0L);
    if (!c.ca_file.empty())
      curl_easy_setopt(e, CURLOPT_PROXY_CAINFO, c.ca_file.c_str());
  }
  curl_easy_setopt(e, CURLOPT_USERAGENT, o.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                   static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);  // we decode
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, Millis(c.connect_timeout_s));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, Millis(c.timeout_s));
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, c.tls_verify ? 1L : 0L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, c.tls_verify ? 2L : 0L);
  if (!c.ca_file.empty())
    curl_easy_setopt(e, CURLOPT_CAINFO, c.ca_file.c_str());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &HeaderCb);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &WriteCb);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
  if (t->req.on_request_sent) {
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &PrereqCb);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, t);
  }
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &OpenSocketCb);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, t);
  if (t->req.keep_raw) {
    // The request head exactly as curl sent it, for WARC request records.
    // Debug callbacks only run in verbose mode; nothing goes to stderr.
    curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, &DebugCb);
    curl_easy_setopt(e, CURLOPT_DEBUGDATA, t);
    curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
  }

  t->headers = curl_slist_append(
      t->headers, ("Accept-Encoding: " + std::string(kAcceptEncoding)).c_str());
  if (!t->req.etag.empty()) {
    t->headers = curl_slist_append(t->headers,
                                   ("If-None-Match: " + t->req.etag).c_str());
  }
  if (!t->req.last_modified.empty()) {
    t->headers = curl_slist_append(
        t->headers, ("If-Modified-Since: " + t->req.last_modified).c_str());
  }
  // An origin rule's headers, cookie and Authorization: for this transfer's
  // own origin only (each redirect hop is a transfer of its own), and
  // never on a proxy's CONNECT.
  for (const std::string& line : t->env->credentials->HeadersFor(t->origin)) {
    t->headers = curl_slist_append(t->headers, line.c_str());
  }
  if (!t->req.form_body.empty()) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(t->req.form_body.size()));
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->req.form_body.c_str());
    t->headers = curl_slist_append(
        t->headers, "Content-Type: application/x-www-form-urlencoded");
  }
  curl_easy_setopt(e, CURLOPT_HEADEROPT,
                   static_cast<long>(CURLHEADER_SEPARATE));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  auto res = c.resolve.find(target.host);
  if (t->proxy.empty() && res != c.resolve.end()) {
    std::string ip = res->second;
    if (ip.find(':') != std::string::npos && ip.front() != '[') {
      ip = "[" + ip + "]";
    }
    t->resolve = curl_slist_append(
        nullptr, (target.host + ":" + target.port + ":" + ip).c_str());
    curl_easy_setopt(e, CURLOPT_RESOLVE, t->resolve);
  }
  return true;
}

void PinTarget(Transfer* t, const TargetParts& target, const std::string& ip) {
  t->pinned = ip;
  const std::string literal =
      ip.find(':') != std::string::npos ? "[" + ip + "]" : ip;
  curl_slist_free_all(t->resolve);
  t->resolve = curl_slist_append(nullptr, (target.host + ":" + target.port +
                                           ":" + literal + ":" + target.port)
                                              .c_str());
  curl_easy_setopt(t->easy, CURLOPT_CONNECT_TO, t->resolve);
}

}  // namespace freshd::fetch

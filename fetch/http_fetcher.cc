#include "fetch/http_fetcher.h"

#include <curl/curl.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <unordered_map>

#include "fetch/address_guard.h"
#include "fetch/content_decoder.h"
#include "fetch/curl_multi_loop.h"

namespace freshd::fetch {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

// Why a transfer was stopped by one of our callbacks (curl then reports a
// write error or we remove the handle ourselves).
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

struct OnceInit {
  OnceInit() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

}  // namespace

std::optional<double> ParseRetryAfter(const std::string& value,
                                      int64_t now_unix) {
  std::string_view v = Trim(value);
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    if (v.size() > 10) return 1e10;  // absurd but numeric: caller caps it
    return static_cast<double>(std::stoll(std::string(v)));
  }
  time_t t = curl_getdate(std::string(v).c_str(), nullptr);
  if (t == -1) return std::nullopt;
  return std::max<double>(0, static_cast<double>(t - now_unix));
}

class HttpFetcher::Impl {
 public:
  Impl(asio::io_context& io, FetcherOptions options)
      : io_(io),
        options_(std::move(options)),
        guard_(options_.config.allow_private_networks,
               options_.exempt_endpoints),
        loop_(io, [this](CURL* easy, CURLcode code) { OnDone(easy, code); }) {
    for (const std::string& t : options_.config.content_types) {
      accepted_types_.push_back(Lower(t));
    }
    if (loop_.ok()) {
      long max_conn = std::max(1, options_.config.max_connections);
      curl_multi_setopt(loop_.multi(), CURLMOPT_MAX_TOTAL_CONNECTIONS,
                        max_conn);
      curl_multi_setopt(loop_.multi(), CURLMOPT_MAXCONNECTS, max_conn);
      curl_multi_setopt(loop_.multi(), CURLMOPT_PIPELINING,
                        static_cast<long>(CURLPIPE_MULTIPLEX));
    }
  }

  ~Impl() {
    for (auto& [id, t] : transfers_) {
      loop_.Remove(t->easy);
      t->Cleanup();
    }
    transfers_.clear();
  }

  bool ok() const { return loop_.ok(); }
  size_t in_flight() const { return transfers_.size(); }
  const FetcherOptions& options() const { return options_; }

  void Fetch(FetchRequest request, Callback done);

 private:
  struct Transfer {
    Impl* owner = nullptr;
    uint64_t id = 0;
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    curl_slist* resolve = nullptr;
    FetchRequest req;
    Callback done;
    FetchResult result;
    Clock::time_point start;
    uint64_t max_body = 0;
    uint64_t header_bytes = 0;
    uint64_t window_bytes = 0;  // received since the last low-speed check
    bool headers_done = false;
    uint64_t content_length = 0;
    bool has_content_length = false;
    std::string content_encoding;
    std::unique_ptr<ContentDecoder> decoder;
    Abort abort = Abort::kNone;
    std::string blocked;  // endpoint refused by the SSRF guard
    std::unique_ptr<asio::steady_timer> speed_timer;
    char error[CURL_ERROR_SIZE] = {};

    void Cleanup() {
      if (speed_timer) speed_timer->cancel();
      if (easy != nullptr) curl_easy_cleanup(easy);
      easy = nullptr;
      curl_slist_free_all(headers);
      curl_slist_free_all(resolve);
      headers = resolve = nullptr;
    }
  };

  static size_t HeaderCb(char* data, size_t size, size_t n, void* userp);
  static size_t WriteCb(char* data, size_t size, size_t n, void* userp);
  static curl_socket_t OpenSocketCb(void* clientp, curlsocktype purpose,
                                    curl_sockaddr* addr);
  bool OnHeaderLine(Transfer& t, std::string_view line);
  bool OnHeadersComplete(Transfer& t);
  bool OnBody(Transfer& t, std::string_view data);
  void ArmSpeedCheck(Transfer& t);
  void OnDone(CURL* easy, CURLcode code);
  void Finish(uint64_t id, CURLcode code);
  void Fail(Callback done, FetchResult r);

  asio::io_context& io_;
  const FetcherOptions options_;
  const AddressGuard guard_;
  std::vector<std::string> accepted_types_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Transfer>> transfers_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
  CurlMultiLoop loop_;  // last: destroyed first, while transfers_ is valid
};

void HttpFetcher::Impl::Fail(Callback done, FetchResult r) {
  std::weak_ptr<char> alive = alive_;
  asio::post(io_, [alive, done = std::move(done), r = std::move(r)]() mutable {
    if (!alive.expired()) done(std::move(r));
  });
}

void HttpFetcher::Impl::Fetch(FetchRequest request, Callback done) {
  FetchResult r;
  r.url = request.url;
  r.final_url = request.url;
  // Only http and https, and we need host and port for the resolve table.
  CURLU* u = curl_url();
  bool parsed =
      u != nullptr &&
      curl_url_set(u, CURLUPART_URL, request.url.c_str(), 0) == CURLUE_OK;
  char* scheme = nullptr;
  char* host = nullptr;
  char* port = nullptr;
  if (parsed) {
    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    curl_url_get(u, CURLUPART_HOST, &host, 0);
    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
  }
  std::string scheme_s = scheme ? Lower(scheme) : "";
  std::string host_s = host ? Lower(host) : "";
  std::string port_s = port ? port : "";
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(u);
  if (!parsed || (scheme_s != "http" && scheme_s != "https") ||
      host_s.empty()) {
    r.outcome = OutcomeClass::kBadUrl;
    r.detail =
        parsed ? "only http and https URLs are fetched" : "unparsable URL";
    Fail(std::move(done), std::move(r));
    return;
  }

  auto t = std::make_unique<Transfer>();
  t->owner = this;
  t->id = next_id_++;
  t->easy = curl_easy_init();
  if (t->easy == nullptr) {
    r.outcome = OutcomeClass::kNetwork;
    r.detail = "curl_easy_init failed";
    Fail(std::move(done), std::move(r));
    return;
  }
  t->req = std::move(request);
  t->done = std::move(done);
  t->result = std::move(r);
  const FetchConfig& c = options_.config;
  t->max_body = t->req.max_body_bytes.value_or(c.max_body_bytes);
  CURL* e = t->easy;
  curl_easy_setopt(e, CURLOPT_URL, t->req.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_PROXY, "");  // never an environment proxy
  curl_easy_setopt(e, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                   static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);  // we decode
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::ceil(c.connect_timeout_s * 1000)));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::ceil(c.timeout_s * 1000)));
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, c.tls_verify ? 1L : 0L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, c.tls_verify ? 2L : 0L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Impl::HeaderCb);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::WriteCb);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &Impl::OpenSocketCb);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, t.get());
  loop_.PrepareEasy(e);

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
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  auto res = c.resolve.find(host_s);
  if (res != c.resolve.end()) {
    std::string ip = res->second;
    if (ip.find(':') != std::string::npos && ip.front() != '[') {
      ip = "[" + ip + "]";
    }
    t->resolve =
        curl_slist_append(nullptr, (host_s + ":" + port_s + ":" + ip).c_str());
    curl_easy_setopt(e, CURLOPT_RESOLVE, t->resolve);
  }

  t->start = Clock::now();
  Transfer* raw = t.get();
  transfers_.emplace(raw->id, std::move(t));
  if (loop_.Add(raw->easy) != CURLM_OK) {
    FetchResult fr = std::move(raw->result);
    Callback cb = std::move(raw->done);
    raw->Cleanup();
    transfers_.erase(raw->id);
    fr.outcome = OutcomeClass::kNetwork;
    fr.detail = "curl_multi_add_handle failed";
    Fail(std::move(cb), std::move(fr));
    return;
  }
  ArmSpeedCheck(*raw);
}

void HttpFetcher::Impl::ArmSpeedCheck(Transfer& t) {
  const FetchConfig& c = options_.config;
  if (c.low_speed_bytes == 0 || c.low_speed_time_s <= 0) return;
  if (!t.speed_timer) t.speed_timer = std::make_unique<asio::steady_timer>(io_);
  t.window_bytes = 0;
  t.speed_timer->expires_after(std::chrono::microseconds(
      static_cast<int64_t>(c.low_speed_time_s * 1e6)));
  std::weak_ptr<char> alive = alive_;
  uint64_t id = t.id;
  t.speed_timer->async_wait([this, alive, id](boost::system::error_code ec) {
    if (alive.expired() || ec) return;
    auto it = transfers_.find(id);
    if (it == transfers_.end()) return;
    Transfer& tr = *it->second;
    const FetchConfig& cfg = options_.config;
    double need =
        static_cast<double>(cfg.low_speed_bytes) * cfg.low_speed_time_s;
    if (static_cast<double>(tr.window_bytes) < need) {
      tr.abort = Abort::kLowSpeed;
      loop_.Remove(tr.easy);
      Finish(id, CURLE_OPERATION_TIMEDOUT);
      return;
    }
    ArmSpeedCheck(tr);
  });
}

curl_socket_t HttpFetcher::Impl::OpenSocketCb(void* clientp,
                                              curlsocktype purpose,
                                              curl_sockaddr* addr) {
  auto* t = static_cast<Transfer*>(clientp);
  if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
  const auto* sa = reinterpret_cast<const sockaddr*>(&addr->addr);
  if (!t->owner->guard_.Allows(sa, addr->addrlen)) {
    t->blocked = FormatSocketAddress(sa, addr->addrlen);
    return CURL_SOCKET_BAD;
  }
  curl_socket_t fd =
      ::socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
  if (fd != CURL_SOCKET_BAD) t->owner->loop_.NoteSocketOpened(fd);
  return fd;
}

size_t HttpFetcher::Impl::HeaderCb(char* data, size_t size, size_t n,
                                   void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  size_t len = size * n;
  t->window_bytes += len;
  t->header_bytes += len;
  if (t->header_bytes > t->owner->options_.config.max_header_bytes) {
    t->abort = Abort::kHeaderTooLarge;
    return 0;
  }
  return t->owner->OnHeaderLine(*t, std::string_view(data, len)) ? len : 0;
}

bool HttpFetcher::Impl::OnHeaderLine(Transfer& t, std::string_view line) {
  if (line.rfind("HTTP/", 0) == 0) {
    // A new response (after 1xx): start over.
    FetchResult& r = t.result;
    r.raw_headers.clear();
    r.content_type.clear();
    r.etag.clear();
    r.last_modified.clear();
    r.retry_after_s.reset();
    t.content_encoding.clear();
    t.has_content_length = false;
    t.headers_done = false;
    size_t sp = line.find(' ');
    r.status = 0;
    if (sp != std::string_view::npos && sp + 4 <= line.size()) {
      std::string_view code = line.substr(sp + 1, 3);
      if (std::all_of(code.begin(), code.end(),
                      [](char c) { return c >= '0' && c <= '9'; })) {
        r.status =
            (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
      }
    }
    r.raw_headers.append(line);
    return true;
  }
  t.result.raw_headers.append(line);
  std::string_view trimmed = Trim(line);
  if (trimmed.empty()) {
    if (t.result.status >= 100 && t.result.status < 200) return true;
    return OnHeadersComplete(t);
  }
  size_t colon = trimmed.find(':');
  if (colon == std::string_view::npos) return true;
  std::string name = Lower(Trim(trimmed.substr(0, colon)));
  std::string_view value = Trim(trimmed.substr(colon + 1));
  FetchResult& r = t.result;
  if (name == "content-type") {
    std::string_view media = value.substr(0, value.find(';'));
    r.content_type = Lower(Trim(media));
  } else if (name == "etag") {
    r.etag = std::string(value);
  } else if (name == "last-modified") {
    r.last_modified = std::string(value);
  } else if (name == "retry-after") {
    r.retry_after_s = ParseRetryAfter(std::string(value),
                                      static_cast<int64_t>(time(nullptr)));
  } else if (name == "content-encoding") {
    t.content_encoding = std::string(value);
  } else if (name == "content-length") {
    std::string v(value);
    if (!v.empty() && v.size() < 20 &&
        std::all_of(v.begin(), v.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      t.content_length = std::stoull(v);
      t.has_content_length = true;
    }
  }
  return true;
}

bool HttpFetcher::Impl::OnHeadersComplete(Transfer& t) {
  t.headers_done = true;
  FetchResult& r = t.result;
  if (r.status >= 300 && r.status < 400) {
    char* loc = nullptr;
    // curl resolves Location against the request URL for us.
    if (curl_easy_getinfo(t.easy, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK &&
        loc != nullptr) {
      r.location = loc;
    }
  }
  if (t.has_content_length && t.content_length > t.max_body &&
      !t.req.truncate_ok) {
    t.abort = Abort::kBodyTooLarge;
    return false;
  }
  bool success = r.status >= 200 && r.status < 300;
  if (success && !t.req.any_content_type && !r.content_type.empty() &&
      std::find(accepted_types_.begin(), accepted_types_.end(),
                r.content_type) == accepted_types_.end()) {
    t.abort = Abort::kBadContentType;
    return false;
  }
  std::optional<ContentEncoding> enc = ParseContentEncoding(t.content_encoding);
  if (!enc) {
    t.abort = Abort::kBadEncoding;
    return false;
  }
  t.decoder = std::make_unique<ContentDecoder>(
      *enc, options_.config.max_decompressed_bytes);
  return true;
}

size_t HttpFetcher::Impl::WriteCb(char* data, size_t size, size_t n,
                                  void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  size_t len = size * n;
  t->window_bytes += len;
  return t->owner->OnBody(*t, std::string_view(data, len)) ? len : 0;
}

bool HttpFetcher::Impl::OnBody(Transfer& t, std::string_view data) {
  FetchResult& r = t.result;
  if (!t.decoder) {  // body without a header block end (should not happen)
    t.decoder = std::make_unique<ContentDecoder>(
        ContentEncoding::kIdentity, options_.config.max_decompressed_bytes);
  }
  bool cut = false;
  if (r.bytes + data.size() > t.max_body) {
    data = data.substr(0, static_cast<size_t>(t.max_body - r.bytes));
    cut = true;
  }
  r.bytes += data.size();
  if (t.req.keep_raw) r.raw_body.append(data);
  // Bodies of redirects and errors are counted but not kept.
  if (r.status >= 200 && r.status < 300) {
    switch (t.decoder->Feed(data, &r.body)) {
      case ContentDecoder::State::kOk:
        break;
      case ContentDecoder::State::kTooLarge:
        t.abort =
            t.req.truncate_ok ? Abort::kTruncated : Abort::kDecodedTooLarge;
        return false;
      case ContentDecoder::State::kCorrupt:
        t.abort = Abort::kBadEncoding;
        return false;
    }
  }
  if (cut) {
    t.abort = t.req.truncate_ok ? Abort::kTruncated : Abort::kBodyTooLarge;
    return false;
  }
  return true;
}

void HttpFetcher::Impl::OnDone(CURL* easy, CURLcode code) {
  Transfer* t = nullptr;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, &t);
  if (t == nullptr) return;
  loop_.Remove(easy);
  Finish(t->id, code);
}

void HttpFetcher::Impl::Finish(uint64_t id, CURLcode code) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  std::unique_ptr<Transfer> t = std::move(it->second);
  transfers_.erase(it);
  FetchResult r = std::move(t->result);
  r.elapsed_s = std::chrono::duration<double>(Clock::now() - t->start).count();
  r.total_elapsed_s = r.elapsed_s;
  char* ip = nullptr;
  if (curl_easy_getinfo(t->easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip) {
    r.remote_ip = ip;
  }
  const FetchConfig& c = options_.config;
  switch (t->abort) {
    case Abort::kHeaderTooLarge:
      r.outcome = OutcomeClass::kTooLarge;
      r.detail = "response headers exceed max_header_bytes (" +
                 std::to_string(c.max_header_bytes) + ")";
      break;
    case Abort::kBodyTooLarge:
      r.outcome = OutcomeClass::kTooLarge;
      r.detail =
          "body exceeds max_body_bytes (" + std::to_string(t->max_body) + ")";
      break;
    case Abort::kDecodedTooLarge:
      r.outcome = OutcomeClass::kTooLarge;
      r.detail = "decoded body exceeds max_decompressed_bytes (" +
                 std::to_string(c.max_decompressed_bytes) + ")";
      break;
    case Abort::kBadContentType:
      r.outcome = OutcomeClass::kBadContentType;
      r.detail = "content type '" + r.content_type + "' is not accepted";
      break;
    case Abort::kBadEncoding:
      r.outcome = OutcomeClass::kBadEncoding;
      r.detail = "unsupported or corrupt Content-Encoding '" +
                 t->content_encoding + "'";
      break;
    case Abort::kLowSpeed:
      r.outcome = OutcomeClass::kTimeout;
      r.detail = "low speed: under " + std::to_string(c.low_speed_bytes) +
                 " bytes/s for " + std::to_string(c.low_speed_time_s) + " s";
      break;
    case Abort::kTruncated:
      r.outcome = OutcomeClass::kOk;
      r.truncated = true;
      break;
    case Abort::kNone:
      break;
  }
  if (t->abort == Abort::kNone) {
    if (code == CURLE_OK) {
      int s = r.status;
      if (s >= 300 && s < 400 && r.location.empty()) {
        char* loc = nullptr;
        if (curl_easy_getinfo(t->easy, CURLINFO_REDIRECT_URL, &loc) ==
                CURLE_OK &&
            loc != nullptr) {
          r.location = loc;
        }
      }
      if (s == 304) {
        r.outcome = OutcomeClass::kNotModified;
        r.body.clear();
      } else if (s >= 200 && s < 300) {
        r.outcome = OutcomeClass::kOk;
      } else if (s >= 300 && s < 400) {
        r.outcome = r.location.empty() ? OutcomeClass::kBadRedirect
                                       : OutcomeClass::kRedirect;
        if (r.location.empty()) r.detail = "redirect without a usable Location";
      } else if (s >= 400 && s < 500) {
        r.outcome = OutcomeClass::kHttp4xx;
      } else if (s >= 500 && s < 600) {
        r.outcome = OutcomeClass::kHttp5xx;
      } else {
        r.outcome = OutcomeClass::kNetwork;
        r.detail = "unexpected HTTP status " + std::to_string(s);
      }
      if (r.outcome != OutcomeClass::kOk) r.body.clear();
    } else {
      r.detail = t->error[0] != '\0' ? t->error : curl_easy_strerror(code);
      switch (code) {
        case CURLE_COULDNT_RESOLVE_HOST:
          r.outcome = OutcomeClass::kDns;
          break;
        case CURLE_OPERATION_TIMEDOUT:
          r.outcome = OutcomeClass::kTimeout;
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
          r.outcome = OutcomeClass::kTls;
          break;
        case CURLE_UNSUPPORTED_PROTOCOL:
        case CURLE_URL_MALFORMAT:
          r.outcome = OutcomeClass::kBadUrl;
          break;
        default:
          r.outcome = OutcomeClass::kNetwork;
          break;
      }
      if (!t->blocked.empty() && code == CURLE_COULDNT_CONNECT) {
        r.outcome = OutcomeClass::kBlockedAddress;
        r.detail = "refused to connect to non-public address " + t->blocked +
                   " ([fetch] allow_private_networks = false)";
      }
    }
  }
  if (r.outcome != OutcomeClass::kOk) r.body.clear();
  Callback done = std::move(t->done);
  t->Cleanup();
  done(std::move(r));
}

// ---- public shell ----

HttpFetcher::HttpFetcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpFetcher::~HttpFetcher() = default;

Result<std::unique_ptr<HttpFetcher>> HttpFetcher::Create(
    asio::io_context& io, FetcherOptions options) {
  static const OnceInit once;  // curl_global_init is not thread-safe itself
  (void)once;
  auto impl = std::make_unique<Impl>(io, std::move(options));
  if (!impl->ok()) return Status::Internal("curl_multi_init failed");
  return std::unique_ptr<HttpFetcher>(new HttpFetcher(std::move(impl)));
}

void HttpFetcher::Fetch(FetchRequest request, Callback done) {
  impl_->Fetch(std::move(request), std::move(done));
}

size_t HttpFetcher::in_flight() const { return impl_->in_flight(); }

const FetcherOptions& HttpFetcher::options() const { return impl_->options(); }

}  // namespace freshd::fetch

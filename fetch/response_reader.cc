#include "fetch/response_reader.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>

#include "fetch/http_text.h"
#include "parse/http_date.h"

namespace freshd::fetch {

namespace {

bool OnHeadersComplete(Transfer& t) {
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
  const std::vector<std::string>& types = t.env->accepted_types;
  bool success = r.status >= 200 && r.status < 300;
  if (success && !t.req.any_content_type && !r.content_type.empty() &&
      std::find(types.begin(), types.end(), r.content_type) == types.end()) {
    t.abort = Abort::kBadContentType;
    return false;
  }
  std::optional<ContentEncoding> enc = ParseContentEncoding(t.content_encoding);
  if (!enc) {
    t.abort = Abort::kBadEncoding;
    return false;
  }
  if (t.req.defer_decoding && success && *enc != ContentEncoding::kIdentity) {
    r.content_encoding = AsciiLowerCopy(TrimSpace(t.content_encoding));
    enc = ContentEncoding::kIdentity;  // the wire bytes, as they come
  }
  t.decoder = std::make_unique<ContentDecoder>(
      *enc, t.env->options->config.max_decompressed_bytes);
  return true;
}

// A status line starts a new response (after a 1xx): start over.
void OnStatusLine(Transfer& t, std::string_view line) {
  FetchResult& r = t.result;
  r.raw_headers.clear();
  r.content_type.clear();
  r.etag.clear();
  r.last_modified.clear();
  r.retry_after_s.reset();
  r.content_encoding.clear();
  t.content_encoding.clear();
  t.has_content_length = false;
  t.headers_done = false;
  size_t sp = line.find(' ');
  r.status = 0;
  if (sp != std::string_view::npos && sp + 4 <= line.size()) {
    std::string_view code = line.substr(sp + 1, 3);
    if (AllDigits(code)) {
      r.status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
    }
  }
  r.raw_headers.append(line);
}

bool OnHeaderLine(Transfer& t, std::string_view line) {
  if (line.rfind("HTTP/", 0) == 0) {
    OnStatusLine(t, line);
    return true;
  }
  t.result.raw_headers.append(line);
  std::string_view trimmed = TrimSpace(line);
  if (trimmed.empty()) {
    if (t.result.status >= 100 && t.result.status < 200) return true;
    return OnHeadersComplete(t);
  }
  size_t colon = trimmed.find(':');
  if (colon == std::string_view::npos) return true;
  std::string name = AsciiLowerCopy(TrimSpace(trimmed.substr(0, colon)));
  std::string_view value = TrimSpace(trimmed.substr(colon + 1));
  FetchResult& r = t.result;
  if (name == "content-type") {
    std::string_view media = value.substr(0, value.find(';'));
    r.content_type = AsciiLowerCopy(TrimSpace(media));
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
    if (!value.empty() && value.size() < 20 && AllDigits(value)) {
      t.content_length = std::stoull(std::string(value));
      t.has_content_length = true;
    }
  }
  return true;
}

// Feeds `data` to the decoder, one slice of output at most; posts a decode
// turn for the rest. While a turn is posted, body bytes are only held: curl
// may call WriteCb a hundred times in one turn, and decoding a slice in each
// would hold the thread as long as decoding the whole body. False (t.abort
// set) when the body is refused.
bool Decode(Transfer& t, std::string_view data) {
  uint64_t budget = t.decode_scheduled ? 0 : kDecodeSliceBytes;
  if (t.body_parts.empty() || t.body_parts.back().size() >= kBodyPartBytes) {
    t.body_parts.emplace_back();
  }
  switch (t.decoder->Feed(data, &t.body_parts.back(), budget)) {
    case ContentDecoder::State::kOk:
      break;
    case ContentDecoder::State::kTooLarge:
      t.abort = t.req.truncate_ok ? Abort::kTruncated : Abort::kDecodedTooLarge;
      return false;
    case ContentDecoder::State::kCorrupt:
      t.abort = Abort::kBadEncoding;
      return false;
  }
  if (t.decoder->has_pending() && !t.decode_scheduled &&
      t.env->schedule_decode) {
    t.decode_scheduled = true;
    t.env->schedule_decode(t.id);
  }
  return true;
}

bool OnBody(Transfer& t, std::string_view data) {
  FetchResult& r = t.result;
  if (!t.decoder) {  // body without a header block end (should not happen)
    t.decoder = std::make_unique<ContentDecoder>(
        ContentEncoding::kIdentity,
        t.env->options->config.max_decompressed_bytes);
  }
  bool cut = false;
  if (r.bytes + data.size() > t.max_body) {
    data = data.substr(0, static_cast<size_t>(t.max_body - r.bytes));
    cut = true;
  }
  r.bytes += data.size();
  if (t.req.keep_raw) r.raw_body.append(data);
  // Bodies of redirects and errors are counted but not kept.
  if (r.status >= 200 && r.status < 300 && !Decode(t, data)) {
    return false;
  }
  if (cut) {
    t.abort = t.req.truncate_ok ? Abort::kTruncated : Abort::kBodyTooLarge;
    return false;
  }
  return true;
}

}  // namespace

std::optional<double> ParseRetryAfter(const std::string& value,
                                      int64_t now_unix) {
  std::string_view v = TrimSpace(value);
  if (v.empty()) return std::nullopt;
  if (AllDigits(v)) {
    if (v.size() > 10) return 1e10;  // absurd but numeric: caller caps it
    return static_cast<double>(std::stoll(std::string(v)));
  }
  std::optional<double> t = parse::ParseHttpDate(v);
  if (!t) return std::nullopt;
  return std::max<double>(0, *t - static_cast<double>(now_unix));
}

size_t HeaderCb(char* data, size_t size, size_t n, void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  size_t len = size * n;
  t->window_bytes += len;
  t->header_bytes += len;
  if (t->header_bytes > t->env->options->config.max_header_bytes) {
    t->abort = Abort::kHeaderTooLarge;
    return 0;
  }
  return OnHeaderLine(*t, std::string_view(data, len)) ? len : 0;
}

size_t WriteCb(char* data, size_t size, size_t n, void* userp) {
  auto* t = static_cast<Transfer*>(userp);
  size_t len = size * n;
  t->window_bytes += len;
  return OnBody(*t, std::string_view(data, len)) ? len : 0;
}

bool DecodeMore(Transfer& t) {
  t.decode_scheduled = false;
  if (!t.decoder || t.abort != Abort::kNone) return t.abort == Abort::kNone;
  return Decode(t, {});
}

int PrereqCb(void* clientp, char* /*primary_ip*/, char* /*local_ip*/,
             int /*primary_port*/, int /*local_port*/) {
  auto* t = static_cast<Transfer*>(clientp);
  if (t->req.on_request_sent) {
    std::function<void()> sent = std::move(t->req.on_request_sent);
    t->req.on_request_sent = nullptr;
    sent();
  }
  return CURL_PREREQFUNC_OK;
}

int DebugCb(CURL* /*easy*/, curl_infotype type, char* data, size_t size,
            void* userp) {
  if (type != CURLINFO_HEADER_OUT) return 0;
  // The CONNECT to a proxy (with its Proxy-Authorization) is not part of
  // the exchange with the target: never archived.
  if (size >= 8 && std::memcmp(data, "CONNECT ", 8) == 0) return 0;
  std::string& head = static_cast<Transfer*>(userp)->result.raw_request;
  // A complete head already captured means curl is re-sending (a retry on
  // a fresh connection): keep the last one only.
  if (head.size() >= 4 && head.compare(head.size() - 4, 4, "\r\n\r\n") == 0) {
    head.clear();
  }
  if (head.size() + size <= kMaxRequestHeadBytes) head.append(data, size);
  return 0;
}

}  // namespace freshd::fetch

#include "store/records.h"

#include <string>

#include "base/coding.h"

namespace freshd::store {
namespace {

// Page: 2 added last_signal_lastmod, 3 dropped the (always empty) sketch.
constexpr uint8_t kPageVersion = 3;
// Host: 2 added fetch_state, 3 dropped the seven robots and politeness
// fields fetch_state superseded.
constexpr uint8_t kHostVersion = 3;
constexpr uint8_t kFeedVersion = 1;
constexpr uint8_t kCaptureVersion = 1;

Status TooLong(std::string_view field, size_t size, size_t limit) {
  return Status::InvalidArgument(std::string(field) + " is " +
                                 std::to_string(size) + " bytes, limit " +
                                 std::to_string(limit));
}

Status Bad(std::string_view what, std::string_view field) {
  return Status::Corruption(std::string(what) + " record: bad or truncated " +
                            std::string(field));
}

// Reads the version byte; Corruption for an empty value or an unknown one.
Status ReadVersion(Decoder& d, std::string_view what, uint8_t known) {
  uint8_t version = 0;
  if (!d.GetByte(&version)) return Bad(what, "version byte");
  if (version == 0 || version > known)
    return Status::Corruption(std::string(what) + " record: unknown version " +
                              std::to_string(version));
  return Status::OK();
}

}  // namespace

Status EncodePageValue(const PageRecord& page, std::string* out) {
  if (page.url.size() > kMaxUrlBytes)
    return TooLong("url", page.url.size(), kMaxUrlBytes);
  if (page.sched_state.size() > kMaxBlobBytes)
    return TooLong("sched_state", page.sched_state.size(), kMaxBlobBytes);
  for (const std::string* s :
       {&page.etag, &page.last_modified, &page.last_outcome}) {
    if (s->size() > kMaxSmallFieldBytes)
      return TooLong("page header field", s->size(), kMaxSmallFieldBytes);
  }
  out->clear();
  out->push_back(static_cast<char>(kPageVersion));
  PutLengthPrefixed(out, page.sched_state);
  PutLengthPrefixed(out, page.etag);
  PutLengthPrefixed(out, page.last_modified);
  PutVarint64(out, static_cast<uint32_t>(page.last_status));
  PutLengthPrefixed(out, page.last_outcome);
  PutDouble(out, page.last_fetch_time);
  PutFixed64(out, page.content_hash);
  PutDouble(out, page.last_signal_lastmod);
  return Status::OK();
}

Status DecodePageValue(std::string_view in, PageRecord* out) {
  Decoder d(in);
  constexpr std::string_view kWhat = "page";
  if (Status s = ReadVersion(d, kWhat, kPageVersion); !s.ok()) return s;
  const uint8_t version = static_cast<uint8_t>(in[0]);
  PageRecord p;
  uint32_t status = 0;
  if (!d.GetLengthPrefixed(&p.sched_state, kMaxBlobBytes))
    return Bad(kWhat, "sched_state");
  if (!d.GetLengthPrefixed(&p.etag, kMaxSmallFieldBytes))
    return Bad(kWhat, "etag");
  if (!d.GetLengthPrefixed(&p.last_modified, kMaxSmallFieldBytes))
    return Bad(kWhat, "last_modified");
  if (!d.GetVarint32(&status)) return Bad(kWhat, "last_status");
  if (!d.GetLengthPrefixed(&p.last_outcome, kMaxSmallFieldBytes))
    return Bad(kWhat, "last_outcome");
  if (!d.GetDouble(&p.last_fetch_time)) return Bad(kWhat, "last_fetch_time");
  if (!d.GetFixed64(&p.content_hash)) return Bad(kWhat, "content_hash");
  std::string_view sketch;  // versions 1 and 2: read and dropped
  if (version < 3 && !d.GetLengthPrefixed(&sketch, kMaxBlobBytes))
    return Bad(kWhat, "sketch");
  if (version >= 2 && !d.GetDouble(&p.last_signal_lastmod))
    return Bad(kWhat, "last_signal_lastmod");
  if (!d.done()) return Bad(kWhat, "length (trailing bytes)");
  p.last_status = static_cast<int32_t>(status);
  p.url_key = out->url_key;
  p.url = std::move(out->url);
  *out = std::move(p);
  return Status::OK();
}

Status EncodeHostValue(const HostRecord& host, std::string* out) {
  if (host.host.size() > kMaxSmallFieldBytes)
    return TooLong("host", host.host.size(), kMaxSmallFieldBytes);
  if (host.pooled_estimates.size() > kMaxBlobBytes)
    return TooLong("pooled_estimates", host.pooled_estimates.size(),
                   kMaxBlobBytes);
  if (host.fetch_state.size() > kMaxBlobBytes)
    return TooLong("fetch_state", host.fetch_state.size(), kMaxBlobBytes);
  out->clear();
  out->push_back(static_cast<char>(kHostVersion));
  PutLengthPrefixed(out, host.pooled_estimates);
  PutLengthPrefixed(out, host.fetch_state);
  return Status::OK();
}

Status DecodeHostValue(std::string_view in, HostRecord* out) {
  Decoder d(in);
  constexpr std::string_view kWhat = "host";
  if (Status s = ReadVersion(d, kWhat, kHostVersion); !s.ok()) return s;
  const uint8_t version = static_cast<uint8_t>(in[0]);
  HostRecord h;
  if (version < 3) {  // the dead robots and politeness fields, dropped
    std::string_view robots_body;
    double robots_time = 0, error_since = 0, next_allowed = 0, backoff = 0;
    uint32_t status = 0, errors = 0;
    if (!d.GetLengthPrefixed(&robots_body, kMaxBlobBytes))
      return Bad(kWhat, "robots_body");
    if (!d.GetDouble(&robots_time)) return Bad(kWhat, "robots time");
    if (!d.GetVarint32(&status)) return Bad(kWhat, "robots_status");
    if (!d.GetDouble(&error_since)) return Bad(kWhat, "error since");
    if (!d.GetDouble(&next_allowed)) return Bad(kWhat, "next allowed");
    if (!d.GetVarint32(&errors)) return Bad(kWhat, "errors");
    if (!d.GetDouble(&backoff)) return Bad(kWhat, "backoff_s");
  }
  if (!d.GetLengthPrefixed(&h.pooled_estimates, kMaxBlobBytes))
    return Bad(kWhat, "pooled_estimates");
  if (version >= 2 && !d.GetLengthPrefixed(&h.fetch_state, kMaxBlobBytes))
    return Bad(kWhat, "fetch_state");
  if (!d.done()) return Bad(kWhat, "length (trailing bytes)");
  h.host = std::move(out->host);
  *out = std::move(h);
  return Status::OK();
}

Status EncodeFeedValue(const FeedEvent& e, std::string* out) {
  if (e.url.size() > kMaxUrlBytes)
    return TooLong("url", e.url.size(), kMaxUrlBytes);
  if (e.kind.size() > kMaxSmallFieldBytes)
    return TooLong("kind", e.kind.size(), kMaxSmallFieldBytes);
  if (e.warc_file.size() > kMaxSmallFieldBytes)
    return TooLong("warc_file", e.warc_file.size(), kMaxSmallFieldBytes);
  out->clear();
  out->push_back(static_cast<char>(kFeedVersion));
  PutLengthPrefixed(out, e.url);
  PutDouble(out, e.time);
  PutLengthPrefixed(out, e.kind);
  PutVarint64(out, static_cast<uint32_t>(e.status));
  PutDouble(out, e.staleness);
  PutFixed64(out, e.text_hash);
  PutLengthPrefixed(out, e.warc_file);
  PutVarint64(out, e.warc_offset);
  return Status::OK();
}

Status DecodeFeedValue(std::string_view in, FeedEvent* out) {
  Decoder d(in);
  constexpr std::string_view kWhat = "feed event";
  if (Status s = ReadVersion(d, kWhat, kFeedVersion); !s.ok()) return s;
  FeedEvent e;
  e.seq = out->seq;  // from the key, kept
  uint32_t status = 0;
  if (!d.GetLengthPrefixed(&e.url, kMaxUrlBytes)) return Bad(kWhat, "url");
  if (!d.GetDouble(&e.time)) return Bad(kWhat, "time");
  if (!d.GetLengthPrefixed(&e.kind, kMaxSmallFieldBytes))
    return Bad(kWhat, "kind");
  if (!d.GetVarint32(&status)) return Bad(kWhat, "status");
  e.status = static_cast<int32_t>(status);
  if (!d.GetDouble(&e.staleness)) return Bad(kWhat, "staleness");
  if (!d.GetFixed64(&e.text_hash)) return Bad(kWhat, "text_hash");
  if (!d.GetLengthPrefixed(&e.warc_file, kMaxSmallFieldBytes))
    return Bad(kWhat, "warc_file");
  if (!d.GetVarint64(&e.warc_offset)) return Bad(kWhat, "warc_offset");
  if (!d.done()) return Bad(kWhat, "length (trailing bytes)");
  *out = std::move(e);
  return Status::OK();
}

Status EncodeCaptureValue(const WarcCapture& c, std::string* out) {
  if (c.target_uri.size() > kMaxUrlBytes)
    return TooLong("target_uri", c.target_uri.size(), kMaxUrlBytes);
  if (c.record_id.size() > kMaxSmallFieldBytes)
    return TooLong("record_id", c.record_id.size(), kMaxSmallFieldBytes);
  if (c.payload_digest.size() > kMaxSmallFieldBytes)
    return TooLong("payload_digest", c.payload_digest.size(),
                   kMaxSmallFieldBytes);
  out->clear();
  out->push_back(static_cast<char>(kCaptureVersion));
  PutLengthPrefixed(out, c.record_id);
  PutLengthPrefixed(out, c.target_uri);
  PutDouble(out, c.date);
  PutLengthPrefixed(out, c.payload_digest);
  PutVarint64(out, c.seq);
  return Status::OK();
}

Status DecodeCaptureValue(std::string_view in, WarcCapture* out) {
  Decoder d(in);
  constexpr std::string_view kWhat = "WARC capture";
  if (Status s = ReadVersion(d, kWhat, kCaptureVersion); !s.ok()) return s;
  WarcCapture c;
  if (!d.GetLengthPrefixed(&c.record_id, kMaxSmallFieldBytes))
    return Bad(kWhat, "record_id");
  if (!d.GetLengthPrefixed(&c.target_uri, kMaxUrlBytes))
    return Bad(kWhat, "target_uri");
  if (!d.GetDouble(&c.date)) return Bad(kWhat, "date");
  if (!d.GetLengthPrefixed(&c.payload_digest, kMaxSmallFieldBytes))
    return Bad(kWhat, "payload_digest");
  if (!d.GetVarint64(&c.seq)) return Bad(kWhat, "seq");
  if (!d.done()) return Bad(kWhat, "length (trailing bytes)");
  *out = std::move(c);
  return Status::OK();
}

}  // namespace freshd::store

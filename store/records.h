// The records freshd keeps in its LevelDB store, and their binary encoding.
//
// Every value is a version byte followed by fields in a fixed order: varints
// (LEB128), fixed 8-byte little-endian doubles (times, seconds since the Unix
// epoch) and length-prefixed byte strings (varint length, then the bytes).
// store/README.md is the byte-level schema. Decode*() accepts any bytes:
// malformed input is a Status::Corruption, never a crash or an over-read.
// The store does not interpret sched_state, pooled_estimates or fetch_state:
// their owners (sched/, daemon/) define those encodings. Decoders read every
// older record version too (a cluster peer running an older freshd publishes
// them; migrations read them); encoders write only the current one.
// Thread-safety: plain values and pure functions; safe from any thread.

#ifndef FRESHD_STORE_RECORDS_H_
#define FRESHD_STORE_RECORDS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace freshd::store {

// Limits applied by the encoders (InvalidArgument beyond them). They bound
// what any caller can make the store hold per record.
inline constexpr size_t kMaxUrlBytes = 16 * 1024;
inline constexpr size_t kMaxSmallFieldBytes = 8 * 1024;  // ETag, dates, names
inline constexpr size_t kMaxBlobBytes = 1024 * 1024;     // opaque byte fields

// One URL the crawler knows. The (url_key, url) pair is the identity; the
// url_key is parse::UrlKey(url) as computed by the caller.
struct PageRecord {
  uint64_t url_key = 0;
  std::string url;  // normalized URL; stored in the LevelDB key

  std::string sched_state;  // opaque, owned by sched/ (it versions its own)

  // Fetch metadata of the last fetch (all empty/zero: never fetched).
  std::string etag;              // validator sent back as If-None-Match
  std::string last_modified;     // header value, sent as If-Modified-Since
  int32_t last_status = 0;       // HTTP status, 0 = no HTTP response
  std::string last_outcome;      // outcome class name, e.g. "ok", "5xx"
  double last_fetch_time = 0.0;  // Unix seconds, 0 = never fetched
  uint64_t content_hash = 0;     // hash of the page's visible text
  // (The page's text sketch is not here: it is key 'G', store/sketch_table.h.
  // Versions 1 and 2 had an always-empty sketch field; version 3 dropped it.)
  // Version 2: the newest sitemap lastmod (Unix seconds) the daemon took as
  // a change signal for this page, 0 = none, so a lastmod is a signal once
  // across restarts too.
  double last_signal_lastmod = 0.0;

  bool operator==(const PageRecord&) const = default;
};

// One host (authority "host:port"): the scheduler's pooled estimates and the
// fetcher's robots cache and politeness state.
struct HostRecord {
  std::string host;  // stored in the LevelDB key

  std::string pooled_estimates;  // opaque, owned by sched/
  // The fetcher's robots cache and gate state of this host, opaque, owned by
  // daemon/fetch_state.h. (Versions 1 and 2 also had seven robots and
  // politeness fields that no freshd wrote after fetch_state came in;
  // version 3 dropped them.)
  std::string fetch_state;

  bool operator==(const HostRecord&) const = default;
};

// One change-feed event (daemon/change_feed.h; key 'E' + be64(seq)).
struct FeedEvent {
  uint64_t seq = 0;  // from the key: the cursor, 1, 2, 3, ... store-wide
  std::string url;
  double time = 0.0;  // Unix seconds the fetch completed
  // "new" (first content, or content again after "gone"), "changed",
  // "gone" (404/410 after content), "unchanged" (the first fetch after a
  // change signal found the same text).
  std::string kind;
  int32_t status = 0;        // HTTP status of the fetch
  double staleness = -1;     // fragment staleness vs the previous version,
                             // [0, 1]; < 0: unknown
  uint64_t text_hash = 0;    // of the visible text (0: none)
  std::string warc_file;     // file name (no directory); "": not archived
  uint64_t warc_offset = 0;  // of the response/revisit record's gzip member

  bool operator==(const FeedEvent&) const = default;
};

// One archived capture that holds a payload: a WARC response record (the
// value of the digest index 'W' and of a page's last capture 'L'). Revisit
// records name it in WARC-Refers-To, -Target-URI and -Date.
struct WarcCapture {
  std::string record_id;       // "<urn:uuid:...>" of the response record
  std::string target_uri;      // its WARC-Target-URI
  double date = 0.0;           // its WARC-Date, Unix seconds
  std::string payload_digest;  // "sha1:" + base32
  uint64_t seq = 0;            // 'W' only: its place in the eviction order

  bool operator==(const WarcCapture&) const = default;
};

// Current value encodings. Encode returns InvalidArgument if a field is
// over its limit; url/host are not part of the value (they are in the key).
Status EncodePageValue(const PageRecord& page, std::string* out);
Status EncodeHostValue(const HostRecord& host, std::string* out);
Status EncodeFeedValue(const FeedEvent& event, std::string* out);
// The seq field is last (a varint), so the store can set it at commit.
Status EncodeCaptureValue(const WarcCapture& capture, std::string* out);

// Decode a value written by any supported version. On success fills every
// value field of *out (key-derived fields are left to the caller). Any
// malformed, truncated, over-long or unknown-version input: Corruption.
Status DecodePageValue(std::string_view in, PageRecord* out);
Status DecodeHostValue(std::string_view in, HostRecord* out);
// Fills every field but seq.
Status DecodeFeedValue(std::string_view in, FeedEvent* out);
Status DecodeCaptureValue(std::string_view in, WarcCapture* out);

}  // namespace freshd::store

#endif  // FRESHD_STORE_RECORDS_H_

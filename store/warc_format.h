// Building blocks of WARC output used by WarcWriter: RFC 4648 base32, SHA-1
// digests, v4 record ids, WARC-Date formatting, one-member gzip and the
// framing of a record. Kept apart from the writer so tests can check each.
// Thread-safety: pure functions (WarcRecordId draws from OpenSSL's RNG,
// which is thread-safe).

#ifndef FRESHD_STORE_WARC_FORMAT_H_
#define FRESHD_STORE_WARC_FORMAT_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace freshd::store {

// RFC 4648 §6 base32 (alphabet A-Z2-7) with '=' padding.
std::string Base32Encode(std::string_view data);

// "<urn:uuid:xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx>" from 16 random bytes.
std::string WarcRecordId();

// ISO 8601 UTC "YYYY-MM-DDThh:mm:ssZ" (W3CDTF as WARC-Date requires) of
// Unix seconds; negative/NaN times print as the epoch.
std::string WarcDate(double unix_seconds);
// "YYYYMMDDhhmmss" UTC, for file names and WARC-Refers-To-Date-less use.
std::string CompactUtc(double unix_seconds);

// A complete WARC/1.1 record: version line, `fields` in order, a computed
// Content-Length, CRLF, the block and the closing CRLF CRLF.
std::string FrameWarcRecord(
    const std::vector<std::pair<std::string, std::string>>& fields,
    std::string_view block);

// `data` as one gzip member (RFC 1952, zlib level 6). Errors: Internal.
Result<std::string> GzipMember(std::string_view data);

}  // namespace freshd::store

#endif  // FRESHD_STORE_WARC_FORMAT_H_

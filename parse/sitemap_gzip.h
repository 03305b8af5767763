// Bounded gzip decompression for sitemaps (zlib). Internal to parse/.
// Pure function; thread-safe.

#ifndef FRESHD_PARSE_SITEMAP_GZIP_H_
#define FRESHD_PARSE_SITEMAP_GZIP_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace freshd::parse {

// True if `bytes` starts with the gzip magic 1F 8B.
bool LooksGzipped(std::string_view bytes);

// Inflates the gzip stream(s) in `bytes` (concatenated members are
// joined) into *out, writing at most `max_bytes`. Returns OK when the
// whole stream was inflated; ResourceExhausted when the output would pass
// `max_bytes` (*out then holds the first max_bytes); Corruption for a
// truncated or damaged stream (*out holds what was inflated before).
Status GunzipBounded(std::string_view bytes, size_t max_bytes,
                     std::string* out);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_SITEMAP_GZIP_H_

// One call from an HTML body to everything freshd keeps about a page version:
// the extraction (html_extract.h) and the text fingerprint of its visible text
// (shingle.h: text hash, token count, shingle set, bottom-m sketch). Used by
// the fetch pipeline and by `freshd fingerprint` / `freshd diff`.
// Thread-safety: pure function; concurrent calls are safe.

#ifndef FRESHD_PARSE_HTML_FINGERPRINT_H_
#define FRESHD_PARSE_HTML_FINGERPRINT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "parse/html_extract.h"
#include "parse/shingle.h"

namespace freshd::parse {

struct FingerprintOptions {
  int k = kDefaultShingleK;    // words per shingle
  size_t m = kDefaultSketchM;  // sketch size
  uint64_t seed = 0;           // per-installation hash secret
  bool keep_shingles = false;  // keep the full set (exact divergence)
  ExtractLimits limits;
};

struct PageFingerprint {
  ExtractedPage page;
  TextFingerprint text;
};

// Extracts `body` and fingerprints its visible text. Fails only as
// ExtractHtml does (a non-empty `url` that is not absolute).
Result<PageFingerprint> FingerprintHtml(std::string_view body,
                                        std::string_view content_type,
                                        std::string_view url,
                                        const FingerprintOptions& options,
                                        std::string_view x_robots_tag = {});

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_HTML_FINGERPRINT_H_

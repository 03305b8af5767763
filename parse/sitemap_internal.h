// Pieces shared by sitemap.cc and sitemap_xml.cc. Internal to parse/;
// not part of the module's interface.

#ifndef FRESHD_PARSE_SITEMAP_INTERNAL_H_
#define FRESHD_PARSE_SITEMAP_INTERNAL_H_

#include <optional>
#include <string>
#include <string_view>

#include "parse/sitemap.h"

namespace freshd::parse::internal {

// Strips ASCII and Unicode spaces (U+00A0, U+2000..U+200B, U+3000, BOM...).
std::string_view TrimUnicodeSpace(std::string_view s);

// Resolves, normalizes and filters entries into a SitemapResult, enforcing
// max_urls. Not thread-safe; one per parse. `options` and `result` must
// outlive it.
class EntrySink {
 public:
  EntrySink(const SitemapOptions& options, SitemapResult* result);

  // Adds one entry or counts why it was dropped. A relative `raw_loc` is
  // resolved against sitemap_url only if `allow_relative`. Returns false
  // when max_urls was reached (result->status is then set): stop parsing.
  bool Add(std::string_view raw_loc, std::optional<int64_t> lastmod,
           SitemapEntry::Kind kind, bool allow_relative);

  // Locs that were valid URLs, kept or dropped by the host/path rules.
  size_t well_formed() const { return well_formed_; }

 private:
  const SitemapOptions& options_;
  SitemapResult* result_;
  std::string base_;       // normalized sitemap_url, or empty
  std::string base_host_;  // its host
  std::string base_dir_;   // its path up to the last '/'
  size_t well_formed_ = 0;
};

// Parses XML `data` (BOM and leading blanks already removed). Errors as
// ParseSitemap.
Result<SitemapResult> ParseXmlSitemap(std::string_view data,
                                      const SitemapOptions& options);

}  // namespace freshd::parse::internal

#endif  // FRESHD_PARSE_SITEMAP_INTERNAL_H_

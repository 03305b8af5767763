#include "parse/html_fingerprint.h"

#include <utility>

namespace freshd::parse {

Result<PageFingerprint> FingerprintHtml(std::string_view body,
                                        std::string_view content_type,
                                        std::string_view url,
                                        const FingerprintOptions& options,
                                        std::string_view x_robots_tag) {
  Result<ExtractedPage> page =
      ExtractHtml(body, content_type, url, options.limits, x_robots_tag);
  if (!page.ok()) return page.status();
  PageFingerprint out;
  out.page = std::move(page).value();
  out.text = FingerprintText(out.page.text, options.k, options.m, options.seed,
                             options.keep_shingles);
  return out;
}

}  // namespace freshd::parse

// libFuzzer target for parse/sitemap: any bytes (XML, text, gzip) parse
// without crashing, within the limits, and every entry is a normalized URL.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parse/sitemap.h"
#include "parse/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  freshd::parse::SitemapOptions options;
  options.max_urls = 1000;
  options.max_bytes = 4 << 20;
  if (size > 0 && (data[0] & 1)) {
    options.sitemap_url = "http://www.example.com/dir/sitemap.xml";
  }
  auto result = freshd::parse::ParseSitemap(in, options);
  if (!result.ok()) return 0;
  if (result->entries.size() > options.max_urls) __builtin_trap();
  for (const auto& e : result->entries) {
    auto again = freshd::parse::NormalizeUrl(e.loc);
    if (!again.ok() || *again != e.loc) __builtin_trap();
  }
  return 0;
}

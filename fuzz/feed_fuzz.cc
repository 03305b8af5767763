// libFuzzer target for parse/feed: any bytes parse without crashing; a
// result holds at most max_entries entries, each a normalized URL on the
// feed's host (no cross-host rule is given), and is an RSS or Atom feed;
// its hub links (WebSub discovery) are at most kMaxFeedHubLinks normalized
// http(s) URLs, its self URL empty or one.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parse/feed.h"
#include "parse/sitemap.h"
#include "parse/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  freshd::parse::FeedOptions options;
  options.max_entries = 200;
  options.max_bytes = 1 << 20;
  const bool based = size > 0 && (data[size - 1] & 1);
  if (based) options.feed_url = "https://blog.example.com/feed/atom.xml";
  auto result = freshd::parse::ParseFeed(in, options);
  if (!result.ok()) return 0;
  if (result->entries.size() > options.max_entries) __builtin_trap();
  if (result->hubs.size() > freshd::parse::kMaxFeedHubLinks) __builtin_trap();
  for (const auto& hub : result->hubs) {
    auto again = freshd::parse::NormalizeUrl(hub);
    if (!again.ok() || *again != hub) __builtin_trap();
  }
  if (!result->self_url.empty()) {
    auto again = freshd::parse::NormalizeUrl(result->self_url);
    if (!again.ok() || *again != result->self_url) __builtin_trap();
  }
  for (const auto& e : result->entries) {
    auto again = freshd::parse::NormalizeUrl(e.url);
    if (!again.ok() || *again != e.url) __builtin_trap();
    if (based && freshd::parse::UrlOrigin(e.url).find("blog.example.com") ==
                     std::string_view::npos) {
      __builtin_trap();
    }
  }
  return 0;
}

// libFuzzer target for parse/link_header and the feed's hub discovery: any
// bytes parse without crashing; at most kMaxLinkValues values, each with a
// non-empty target of at most kMaxLinkTargetBytes and lower-case rels;
// UseLinkHeaders leaves at most kMaxFeedHubLinks hubs, each an http(s) URL
// that normalizes to itself.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "parse/feed.h"
#include "parse/link_header.h"
#include "parse/sitemap.h"
#include "parse/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto links = freshd::parse::ParseLinkHeader(in);
  if (links.size() > freshd::parse::kMaxLinkValues) __builtin_trap();
  for (const auto& l : links) {
    if (l.target.empty() ||
        l.target.size() > freshd::parse::kMaxLinkTargetBytes)
      __builtin_trap();
    for (const std::string& r : l.rels) {
      for (char c : r) {
        if (c >= 'A' && c <= 'Z') __builtin_trap();
      }
    }
  }
  freshd::parse::FeedResult feed;
  const std::string head = "HTTP/1.1 200 OK\r\nLink: " + std::string(in) +
                           "\r\nlink:" + std::string(in) + "\r\n\r\n";
  freshd::parse::UseLinkHeaders(head, "https://blog.example/feed/", &feed);
  if (feed.hubs.size() > freshd::parse::kMaxFeedHubLinks) __builtin_trap();
  for (const std::string& hub : feed.hubs) {
    auto again = freshd::parse::NormalizeUrl(hub);
    if (!again.ok() || *again != hub) __builtin_trap();
  }
  return 0;
}

// HTTP Link headers (RFC 8288 §3) as WebSub discovery reads them (W3C
// WebSub §4: a topic's `Link: <HUB>; rel="hub"` and `<TOPIC>; rel="self"`).
// ParseLinkHeader reads one field value: comma-separated link-values, each
// `<URI-Reference>` followed by `;`-separated parameters; `rel` (a token or
// a quoted string) may hold several space-separated relation types, which
// are compared case-insensitively (RFC 8288 §2.1.1). Other parameters are
// skipped. A malformed link-value is skipped up to the next comma outside
// quotes and angle brackets; nothing throws.
// Bounds: at most kMaxLinkValues values are returned, a target over
// kMaxLinkTargetBytes is dropped, and input past kMaxLinkHeaderBytes is not
// read. Targets are returned as written (unresolved).
// LinkHeaderValues finds the Link fields of a raw response head (status
// line and header block as fetch::FetchResult::raw_headers holds it; of
// the last response when 1xx came first) and returns their values.
// Thread-safety: pure functions; call from any thread.

#ifndef FRESHD_PARSE_LINK_HEADER_H_
#define FRESHD_PARSE_LINK_HEADER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace freshd::parse {

inline constexpr size_t kMaxLinkValues = 32;
inline constexpr size_t kMaxLinkTargetBytes = 4096;
inline constexpr size_t kMaxLinkHeaderBytes = 64 * 1024;

struct LinkValue {
  std::string target;                       // the URI-Reference between < and >
  std::vector<std::string> rels;            // relation types, lower case
  bool HasRel(std::string_view rel) const;  // `rel` in lower case
};

std::vector<LinkValue> ParseLinkHeader(std::string_view value);

// The values of every "Link:" field of `raw_head`, in order (at most
// kMaxLinkValues fields).
std::vector<std::string_view> LinkHeaderValues(std::string_view raw_head);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_LINK_HEADER_H_

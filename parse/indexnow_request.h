// IndexNow (indexnow.org) ping parsing: the query of
// GET /indexnow?url=U&key=K[&keyLocation=L] and the JSON body of
// POST /indexnow {"host", "key", "keyLocation"?, "urlList": [...]}, checked
// against the protocol before anything else looks at a ping:
//   - 400: not the protocol's shape (no url/key, a body that is not a JSON
//     object, nested deeper than kMaxIndexNowJsonDepth, over
//     kMaxIndexNowBodyBytes, more than kMaxIndexNowUrls URLs, a URL that is
//     not an absolute http(s) URL, a Content-Type other than
//     application/json);
//   - 422: a key that is not 8-128 of [a-zA-Z0-9-], a URL (or keyLocation)
//     not on `host`, a URL outside keyLocation's folder.
// What passes is normalized (parse/url.h): every URL and keyLocation on
// the one host, whose key file is then KeyFileUrl. Pure functions: no
// state, any thread; linear in the input.

#ifndef FRESHD_PARSE_INDEXNOW_REQUEST_H_
#define FRESHD_PARSE_INDEXNOW_REQUEST_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace freshd::parse {

inline constexpr size_t kMaxIndexNowUrls = 10000;  // per POST (protocol)
inline constexpr size_t kMinIndexNowKey = 8;
inline constexpr size_t kMaxIndexNowKey = 128;
// The object, its urlList array, the strings in it: 3 levels; one more is
// allowed for extension fields, nothing deeper is parsed.
inline constexpr int kMaxIndexNowJsonDepth = 4;
// 10,000 URLs of ~1 KiB and the rest of the object.
inline constexpr size_t kMaxIndexNowBodyBytes = 10u << 20;

struct IndexNowRequest {
  std::string host;               // lower case, no port (the URLs' host)
  std::string key;                // 8-128 of [a-zA-Z0-9-]
  std::string key_location;       // normalized URL on `host`; "" if none
  std::vector<std::string> urls;  // normalized, on `host`; at least one
};

struct IndexNowParse {
  int status = 0;     // 0: parsed; else 400 or 422 (header comment)
  std::string error;  // why, for the reply's {"error": ...}
  IndexNowRequest request;

  bool ok() const { return status == 0; }
};

// Whether `key` has the protocol's form.
[[nodiscard]] bool IsIndexNowKey(std::string_view key);

// The query string of GET /indexnow (after '?', form-encoded).
[[nodiscard]] IndexNowParse ParseIndexNowQuery(std::string_view query);

// A POST /indexnow: its Content-Type header value and body.
[[nodiscard]] IndexNowParse ParseIndexNowJson(std::string_view content_type,
                                              std::string_view body);

// Where `request`'s key is proven: keyLocation, else KEY.txt at the root of
// the first URL's origin (scheme and port as the ping's URLs name them).
[[nodiscard]] std::string KeyFileUrl(const IndexNowRequest& request);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_INDEXNOW_REQUEST_H_

// libFuzzer target for parse/indexnow_request: neither form crashes, and
// what parses keeps the contract: a well-formed key, at least one and at
// most kMaxIndexNowUrls URLs, each normalized and on the ping's host, and a
// key file URL on that host. Input: the first byte picks the form (even:
// the query of GET; odd: a POST body, JSON Content-Type).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parse/indexnow_request.h"
#include "parse/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace freshd::parse;
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const IndexNowParse p =
      (data[0] & 1) == 0
          ? ParseIndexNowQuery(in)
          : ParseIndexNowJson("application/json; charset=utf-8", in);
  if (!p.ok()) {
    if ((p.status != 400 && p.status != 422) || p.error.empty()) {
      __builtin_trap();
    }
    return 0;
  }
  const IndexNowRequest& r = p.request;
  if (!IsIndexNowKey(r.key)) __builtin_trap();
  if (r.urls.empty() || r.urls.size() > kMaxIndexNowUrls) __builtin_trap();
  for (const auto& url : r.urls) {
    auto again = NormalizeUrl(url);
    if (!again.ok() || *again != url || UrlHost(url) != r.host) {
      __builtin_trap();
    }
  }
  auto file = NormalizeUrl(KeyFileUrl(r));
  if (!file.ok() || UrlHost(*file) != r.host) __builtin_trap();
  return 0;
}

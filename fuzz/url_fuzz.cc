// libFuzzer target for parse/url: normalization never crashes, is
// idempotent, stays within kMaxUrlLength and printable ASCII; resolution
// against a fixed base behaves the same. Input: ref, or base '\n' ref.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "parse/url.h"

namespace {

void CheckNormalized(const std::string& url) {
  using namespace freshd::parse;
  if (url.size() > kMaxUrlLength) __builtin_trap();
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 ||
        static_cast<unsigned char>(c) >= 0x7f) {
      __builtin_trap();
    }
  }
  auto again = NormalizeUrl(url);
  if (!again.ok() || *again != url) __builtin_trap();
  if (UrlHost(url).empty() || UrlPathAndQuery(url).empty()) __builtin_trap();
  (void)UrlKey(url);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace freshd::parse;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto n = NormalizeUrl(in);
  if (n.ok()) CheckNormalized(*n);
  size_t nl = in.find('\n');
  std::string_view base = nl == std::string_view::npos
                              ? std::string_view("http://a.example/b/c?d")
                              : in.substr(0, nl);
  std::string_view ref = nl == std::string_view::npos ? in : in.substr(nl + 1);
  auto r = ResolveUrl(base, ref);
  if (r.ok()) CheckNormalized(*r);
  return 0;
}

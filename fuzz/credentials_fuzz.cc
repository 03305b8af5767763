// libFuzzer target for fetch/origin_credentials: ParseCredentialsText never
// crashes, and what it accepts is a header value that cannot break the
// request head ("Basic " or "Bearer " then no control character; a refusal
// is one of three fixed messages, never the input's); Redact keeps every line
// but blanks the value of each secret field, so no byte after "authorization:"
// survives. Input: the text of a credentials file, then the same bytes as a
// request head.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/ascii.h"
#include "fetch/origin_credentials.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace freshd;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  Result<std::string> value = fetch::ParseCredentialsText(in);
  if (value.ok()) {
    if (!value->starts_with("Basic ") && !value->starts_with("Bearer ")) {
      __builtin_trap();
    }
    for (unsigned char c : *value) {
      if (c < 0x20 || c == 0x7f) __builtin_trap();
    }
  } else {
    // One of three fixed messages: nothing of the input in it.
    static const std::string kMessages[] = {
        fetch::ParseCredentialsText("basic").status().message(),
        fetch::ParseCredentialsText("bearer").status().message(),
        fetch::ParseCredentialsText("x").status().message()};
    const std::string& m = value.status().message();
    if (m != kMessages[0] && m != kMessages[1] && m != kMessages[2]) {
      __builtin_trap();
    }
  }
  static const fetch::OriginCredentials kNone;
  const std::string redacted = kNone.Redact(in);
  size_t pos = 0, lines_in = 0, lines_out = 0;
  for (char c : in) lines_in += c == '\n';
  while (pos < redacted.size()) {
    size_t end = redacted.find('\n', pos);
    if (end == std::string::npos) end = redacted.size();
    const std::string_view line =
        std::string_view(redacted).substr(pos, end - pos);
    lines_out += end < redacted.size();
    pos = end + 1;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = TrimAsciiBlanks(line.substr(0, colon));
    if (EqualsIgnoreAsciiCase(name, "authorization") ||
        EqualsIgnoreAsciiCase(name, "cookie")) {
      std::string_view rest = line.substr(colon + 1);
      if (rest.ends_with('\r')) rest.remove_suffix(1);
      if (rest != " [redacted]") __builtin_trap();
    }
  }
  if (lines_in != lines_out) __builtin_trap();
  return 0;
}

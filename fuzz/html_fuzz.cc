// libFuzzer target for the HTML path: arbitrary bytes through ExtractHtml
// (charset sniffing and conversion, tokenizer, references, links) and the
// fingerprint (tokenizer, shingles, sketch, sketch encode/decode). The first
// input byte picks a Content-Type so that the iconv paths are reached too.
// Invariants checked: the text is valid UTF-8 within the limits, and the
// sketch round-trips through its binary form.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/sketch.h"
#include "parse/html_fingerprint.h"
#include "parse/text_utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace freshd::parse;
  static constexpr const char* kTypes[] = {
      "text/html",
      "text/html; charset=utf-8",
      "text/html; charset=windows-1252",
      "text/html; charset=shift_jis",
      "text/html; charset=utf-16le",
      "text/html; charset=iso-2022-jp",
      "text/html; charset=gb18030",
      "",
  };
  if (size == 0) return 0;
  std::string_view type = kTypes[data[0] % 8];
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  FingerprintOptions options;
  options.seed = 7;
  options.m = 16;
  options.limits.max_text_bytes = 1 << 16;
  options.limits.max_links = 100;
  auto fp = FingerprintHtml(body, type, "http://fuzz.example/a/b?c", options);
  if (!fp.ok()) std::abort();  // the URL is valid: must never fail
  const std::string& text = fp->page.text;
  if (ValidUtf8Prefix(text) != text.size()) std::abort();
  if (text.size() > options.limits.max_text_bytes + 1) std::abort();
  if (fp->page.links.size() > options.limits.max_links) std::abort();
  auto back = freshd::DecodeSketch(EncodeSketch(fp->text.sketch));
  if (!back.ok() || !(*back == fp->text.sketch)) std::abort();
  // Decoding arbitrary bytes must fail cleanly or succeed, never crash.
  (void)freshd::DecodeSketch(body);
  return 0;
}

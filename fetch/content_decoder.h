// ContentDecoder: streaming decoder for HTTP Content-Encoding (gzip, x-gzip,
// deflate in its zlib or raw form, br, identity) with a hard cap on the
// decoded size, so a decompression bomb is stopped after at most `max_output`
// bytes plus one 16 KiB step of work, whatever its ratio. The fetcher feeds
// it the body as it arrives (zlib and brotli streaming APIs).
// Not thread-safe; one instance per response.

#ifndef FRESHD_FETCH_CONTENT_DECODER_H_
#define FRESHD_FETCH_CONTENT_DECODER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace freshd::fetch {

enum class ContentEncoding { kIdentity, kGzip, kDeflate, kBrotli };

// Parses a Content-Encoding header value (case-insensitive, surrounding
// whitespace ignored; "" and "identity" are kIdentity). Returns nullopt for
// anything else, including stacked codings such as "gzip, br".
std::optional<ContentEncoding> ParseContentEncoding(std::string_view value);

// The Accept-Encoding header value matching what ContentDecoder handles.
inline constexpr std::string_view kAcceptEncoding = "gzip, deflate, br";

class ContentDecoder {
 public:
  enum class State { kOk, kTooLarge, kCorrupt };

  ContentDecoder(ContentEncoding encoding, uint64_t max_output);
  ~ContentDecoder();
  ContentDecoder(const ContentDecoder&) = delete;
  ContentDecoder& operator=(const ContentDecoder&) = delete;

  // Decodes `in` and appends to *out. kTooLarge once the total output would
  // exceed max_output (*out then holds at most max_output bytes), kCorrupt on
  // a malformed stream. After a non-ok state, further calls return it again.
  State Feed(std::string_view in, std::string* out);

  // Total decoded bytes produced so far.
  uint64_t output_bytes() const { return produced_; }

 private:
  struct Impl;
  State Emit(const char* data, size_t n, std::string* out);

  const ContentEncoding encoding_;
  const uint64_t max_output_;
  uint64_t produced_ = 0;
  State state_ = State::kOk;
  std::unique_ptr<Impl> impl_;
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_CONTENT_DECODER_H_

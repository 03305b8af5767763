// ContentDecoder: streaming decoder for HTTP Content-Encoding (gzip, x-gzip,
// deflate in its zlib or raw form, br, identity) with a hard cap on the
// decoded size, so a decompression bomb is stopped after at most `max_output`
// bytes plus one 16 KiB step of work, whatever its ratio. The fetcher feeds
// it the body as it arrives (zlib and brotli streaming APIs), in slices: a
// call may stop after about `budget` output bytes and hold back the input it
// has not decoded yet, so that a bomb never holds the caller's thread for
// long (the fetcher drains the rest in later event-loop turns).
// Not thread-safe; one instance per response.

#ifndef FRESHD_FETCH_CONTENT_DECODER_H_
#define FRESHD_FETCH_CONTENT_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace freshd::fetch {

enum class ContentEncoding { kIdentity, kGzip, kDeflate, kBrotli };

// Parses a Content-Encoding header value (case-insensitive, surrounding
// whitespace ignored; "" and "identity" are kIdentity). Returns nullopt for
// anything else, including stacked codings such as "gzip, br".
std::optional<ContentEncoding> ParseContentEncoding(std::string_view value);

// Decoded bytes a caller produces per turn of its thread or pool (≈ 0.5 ms
// of inflate) when it decodes in slices: the fetcher for one transfer per
// event-loop turn, DeferredBodyDecoder::Step for one pool turn.
inline constexpr uint64_t kDecodeSliceBytes = 512 * 1024;

// A body decoded in parts (kept apart so that no single string is grown
// to a bomb's size in one turn), as one string: the part itself when there
// is one, else one copy.
std::string JoinParts(std::vector<std::string> parts);

// The Accept-Encoding header value matching what ContentDecoder handles.
inline constexpr std::string_view kAcceptEncoding = "gzip, deflate, br";

class ContentDecoder {
 public:
  enum class State { kOk, kTooLarge, kCorrupt };

  ContentDecoder(ContentEncoding encoding, uint64_t max_output);
  ~ContentDecoder();
  ContentDecoder(const ContentDecoder&) = delete;
  ContentDecoder& operator=(const ContentDecoder&) = delete;

  // Decodes the held-back input, then `in`, and appends to *out. Stops once
  // this call has produced `budget` bytes or more (checked every 16 KiB
  // step); what is left is held back and has_pending() is true until a later
  // call (Feed("") drains) finishes it. kTooLarge once the total output
  // would exceed max_output (*out then holds at most max_output bytes),
  // kCorrupt on a malformed stream. After a non-ok state, further calls
  // return it again. Identity bodies ignore the budget (a copy is cheap).
  State Feed(std::string_view in, std::string* out,
             uint64_t budget = UINT64_MAX);

  // True when input is held back or output may still be waiting in the
  // decompressor: call Feed("") until false (or until a non-ok state).
  bool has_pending() const { return state_ == State::kOk && pending_; }

  // Total decoded bytes produced so far.
  uint64_t output_bytes() const { return produced_; }

 private:
  struct Impl;
  State Emit(const char* data, size_t n, std::string* out);
  // Decode from `input` (not more than `budget` output bytes, in 16 KiB
  // steps); *consumed: the input bytes used. Set pending_.
  State FeedBrotli(std::string_view input, std::string* out, uint64_t budget,
                   size_t* consumed);
  State FeedZlib(std::string_view input, std::string* out, uint64_t budget,
                 size_t* consumed);

  const ContentEncoding encoding_;
  const uint64_t max_output_;
  uint64_t produced_ = 0;
  State state_ = State::kOk;
  bool pending_ = false;
  std::unique_ptr<Impl> impl_;
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_CONTENT_DECODER_H_

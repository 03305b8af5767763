#include "fetch/content_decoder.h"

#include <brotli/decode.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <utility>

#include "base/ascii.h"

namespace freshd::fetch {
namespace {

constexpr size_t kStep = 16 * 1024;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::string JoinParts(std::vector<std::string> parts) {
  if (parts.size() == 1) return std::move(parts.front());
  size_t size = 0;
  for (const std::string& part : parts) size += part.size();
  std::string out;
  out.reserve(size);
  for (const std::string& part : parts) out.append(part);
  return out;
}

std::optional<ContentEncoding> ParseContentEncoding(std::string_view value) {
  std::string v = AsciiLowerCopy(Trim(value));
  if (v.empty() || v == "identity") return ContentEncoding::kIdentity;
  if (v == "gzip" || v == "x-gzip") return ContentEncoding::kGzip;
  if (v == "deflate") return ContentEncoding::kDeflate;
  if (v == "br") return ContentEncoding::kBrotli;
  return std::nullopt;
}

struct ContentDecoder::Impl {
  z_stream z{};
  bool z_init = false;
  bool z_done = false;  // a member ended; more input starts a new one
  // Input not decoded yet: the rest after a call stopped at its budget, or
  // (deflate) the first bytes while the form is not known.
  std::string held;
  size_t held_off = 0;  // held[0, held_off) is decoded already
  BrotliDecoderState* br = nullptr;

  ~Impl() {
    if (z_init) inflateEnd(&z);
    if (br != nullptr) BrotliDecoderDestroyInstance(br);
  }
};

ContentDecoder::ContentDecoder(ContentEncoding encoding, uint64_t max_output)
    : encoding_(encoding),
      max_output_(max_output),
      impl_(std::make_unique<Impl>()) {
  if (encoding_ == ContentEncoding::kGzip) {
    // 15 + 32: zlib or gzip header, detected automatically.
    impl_->z_init = inflateInit2(&impl_->z, 15 + 32) == Z_OK;
    if (!impl_->z_init) state_ = State::kCorrupt;
  } else if (encoding_ == ContentEncoding::kBrotli) {
    impl_->br = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
    if (impl_->br == nullptr) state_ = State::kCorrupt;
  }
}

ContentDecoder::~ContentDecoder() = default;

ContentDecoder::State ContentDecoder::Emit(const char* data, size_t n,
                                           std::string* out) {
  if (produced_ + n > max_output_) {
    size_t room = static_cast<size_t>(max_output_ - produced_);
    out->append(data, room);
    produced_ = max_output_;
    return state_ = State::kTooLarge;
  }
  out->append(data, n);
  produced_ += n;
  return State::kOk;
}

ContentDecoder::State ContentDecoder::Feed(std::string_view in,
                                           std::string* out, uint64_t budget) {
  if (state_ != State::kOk) return state_;
  if (encoding_ == ContentEncoding::kIdentity) {
    return Emit(in.data(), in.size(), out);
  }
  std::string& held = impl_->held;
  size_t& off = impl_->held_off;
  const bool from_held = off < held.size();
  std::string_view input = in;
  if (from_held) {
    held.append(in);
    input = std::string_view(held).substr(off);
  }
  size_t consumed = 0;
  State s = encoding_ == ContentEncoding::kBrotli
                ? FeedBrotli(input, out, budget, &consumed)
                : FeedZlib(input, out, budget, &consumed);
  if (s != State::kOk) return s;
  if (!from_held) {
    held.assign(input.substr(consumed));
    off = 0;
  } else if ((off += consumed) == held.size()) {
    held.clear();
    off = 0;
  } else if (off > held.size() / 2) {  // compact: amortised O(1) a byte
    held.erase(0, off);
    off = 0;
  }
  return State::kOk;
}

ContentDecoder::State ContentDecoder::FeedBrotli(std::string_view input,
                                                 std::string* out,
                                                 uint64_t budget,
                                                 size_t* consumed) {
  char buf[kStep];
  size_t avail_in = input.size();
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(input.data());
  const uint64_t start = produced_;
  pending_ = false;
  while (true) {
    if (produced_ - start >= budget) {
      pending_ = true;
      break;
    }
    size_t avail_out = sizeof(buf);
    uint8_t* next_out = reinterpret_cast<uint8_t*>(buf);
    BrotliDecoderResult r = BrotliDecoderDecompressStream(
        impl_->br, &avail_in, &next_in, &avail_out, &next_out, nullptr);
    if (r == BROTLI_DECODER_RESULT_ERROR) return state_ = State::kCorrupt;
    if (Emit(buf, sizeof(buf) - avail_out, out) != State::kOk) return state_;
    if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) continue;
    if (r == BROTLI_DECODER_RESULT_SUCCESS && avail_in > 0) {
      return state_ = State::kCorrupt;  // trailing garbage
    }
    break;
  }
  *consumed = input.size() - avail_in;
  return State::kOk;
}

ContentDecoder::State ContentDecoder::FeedZlib(std::string_view input,
                                               std::string* out,
                                               uint64_t budget,
                                               size_t* consumed) {
  *consumed = 0;
  pending_ = false;
  if (encoding_ == ContentEncoding::kDeflate && !impl_->z_init) {
    // "deflate" is zlib-wrapped per RFC 9110 but raw in some servers; the
    // first two bytes tell (RFC 1950 header check).
    if (input.size() < 2) return State::kOk;  // held until more arrives
    auto b0 = static_cast<unsigned char>(input[0]);
    auto b1 = static_cast<unsigned char>(input[1]);
    bool zlib = (b0 & 0x0f) == 8 && ((b0 << 8) | b1) % 31 == 0;
    if (inflateInit2(&impl_->z, zlib ? 15 : -15) != Z_OK) {
      return state_ = State::kCorrupt;
    }
    impl_->z_init = true;
  }
  char buf[kStep];
  z_stream& z = impl_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  z.avail_in = static_cast<uInt>(input.size());
  const uint64_t start = produced_;
  while (true) {
    if (impl_->z_done) {
      if (z.avail_in == 0) break;
      // Concatenated gzip members; anything else after the end is junk.
      if (encoding_ != ContentEncoding::kGzip || inflateReset(&z) != Z_OK) {
        return state_ = State::kCorrupt;
      }
      impl_->z_done = false;
    }
    if (produced_ - start >= budget) {
      pending_ = true;
      break;
    }
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    int r = inflate(&z, Z_NO_FLUSH);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
      return state_ = State::kCorrupt;
    }
    if (Emit(buf, sizeof(buf) - z.avail_out, out) != State::kOk) return state_;
    if (r == Z_STREAM_END) {
      impl_->z_done = true;
      continue;
    }
    // Done when all input is consumed and zlib had room to flush.
    if (z.avail_in == 0 && z.avail_out > 0) break;
    if (r == Z_BUF_ERROR) break;
  }
  *consumed = input.size() - z.avail_in;
  return State::kOk;
}

}  // namespace freshd::fetch

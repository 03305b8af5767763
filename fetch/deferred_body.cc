#include "fetch/deferred_body.h"

#include <optional>
#include <string_view>
#include <utility>

namespace freshd::fetch {

namespace {

constexpr size_t kInputPiece = 64 * 1024;
constexpr size_t kPartBytes = 1024 * 1024;

}  // namespace

DeferredBodyDecoder::DeferredBodyDecoder(FetchResult result,
                                         uint64_t max_decompressed_bytes)
    : result_(std::move(result)), max_output_(max_decompressed_bytes) {
  if (result_.content_encoding.empty() ||
      result_.outcome != OutcomeClass::kOk) {
    result_.content_encoding.clear();
    done_ = true;
    return;
  }
  input_ = std::exchange(result_.body, {});
  if (std::optional<ContentEncoding> enc =
          ParseContentEncoding(result_.content_encoding)) {
    decoder_ = std::make_unique<ContentDecoder>(*enc, max_output_);
  }
}

bool DeferredBodyDecoder::Step(uint64_t budget) {
  if (done_) return true;
  if (!decoder_) return Finish(ContentDecoder::State::kCorrupt);
  const uint64_t start = decoder_->output_bytes();
  while (decoder_->output_bytes() - start < budget) {
    std::string_view piece;
    if (!decoder_->has_pending()) {
      if (fed_ == input_.size()) return Finish(ContentDecoder::State::kOk);
      piece = std::string_view(input_).substr(fed_, kInputPiece);
      fed_ += piece.size();
    }
    if (parts_.empty() || parts_.back().size() >= kPartBytes) {
      parts_.emplace_back();
    }
    const uint64_t left = budget - (decoder_->output_bytes() - start);
    ContentDecoder::State state = decoder_->Feed(piece, &parts_.back(), left);
    if (state != ContentDecoder::State::kOk) return Finish(state);
  }
  return false;
}

bool DeferredBodyDecoder::Finish(ContentDecoder::State state) {
  done_ = true;
  const std::string coding = std::exchange(result_.content_encoding, {});
  input_ = {};
  switch (state) {
    case ContentDecoder::State::kOk:
      result_.body = JoinParts(std::exchange(parts_, {}));
      return true;
    case ContentDecoder::State::kTooLarge:
      result_.outcome = OutcomeClass::kTooLarge;
      result_.detail = "decoded body exceeds max_decompressed_bytes (" +
                       std::to_string(max_output_) + ")";
      break;
    case ContentDecoder::State::kCorrupt:
      result_.outcome = OutcomeClass::kBadEncoding;
      result_.detail =
          "unsupported or corrupt Content-Encoding '" + coding + "'";
      break;
  }
  parts_.clear();
  result_.body.clear();
  return true;
}

void DecodeDeferredBody(FetchResult* r, uint64_t max_decompressed_bytes) {
  DeferredBodyDecoder decoder(std::move(*r), max_decompressed_bytes);
  while (!decoder.Step(UINT64_MAX)) {
  }
  *r = std::move(decoder.result());
}

}  // namespace freshd::fetch

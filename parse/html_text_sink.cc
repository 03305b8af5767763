#include "parse/html_text_sink.h"

#include <array>

#include "parse/html_entities.h"

namespace freshd::parse {
namespace {

// 1 = whitespace/control (collapses), 2 = '&', 0 = ordinary byte.
constexpr std::array<unsigned char, 256> MakeClass() {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c <= 0x20; ++c) t[c] = 1;
  t[0x7F] = 1;
  t['&'] = 2;
  return t;
}
constexpr std::array<unsigned char, 256> kClass = MakeClass();

}  // namespace

void HtmlTextSink::Put(std::string_view run) {
  if (truncated_ || run.empty()) return;
  if (!out_->empty() && (pending_block_ || pending_space_))
    out_->push_back(pending_block_ ? '\n' : ' ');
  pending_block_ = pending_space_ = false;
  if (out_->size() + run.size() > max_bytes_) {
    size_t room = max_bytes_ > out_->size() ? max_bytes_ - out_->size() : 0;
    // Back off to a code point boundary.
    while (room > 0 && (static_cast<unsigned char>(run[room]) & 0xC0) == 0x80)
      --room;
    out_->append(run.data(), room);
    truncated_ = true;
    return;
  }
  out_->append(run.data(), run.size());
}

void HtmlTextSink::Append(std::string_view raw) {
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  const size_t n = raw.size();
  size_t i = 0;
  while (i < n && !truncated_) {
    size_t start = i;
    while (i < n && kClass[p[i]] == 0) ++i;
    Put(raw.substr(start, i - start));
    if (i >= n) break;
    if (kClass[p[i]] == 1) {
      pending_space_ = true;
      ++i;
      continue;
    }
    scratch_.clear();
    size_t used = DecodeCharRef(raw, i, /*in_attribute=*/false, &scratch_);
    if (used == 0) {
      Put("&");
      ++i;
    } else {
      // A decoded reference may itself be whitespace (&#10;, &Tab;...).
      if (scratch_.size() == 1 &&
          kClass[static_cast<unsigned char>(scratch_[0])] == 1) {
        pending_space_ = true;
      } else {
        Put(scratch_);
      }
      i += used;
    }
  }
}

}  // namespace freshd::parse

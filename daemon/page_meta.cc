#include "daemon/page_meta.h"

#include <array>
#include <cstring>
#include <string>

namespace freshd::daemon {

namespace {

// The block starts with the kFields lengths, each one byte below kLong, else
// kLong and 4 bytes; then the fields' bytes in order. (Three 4-byte lengths
// before: 9 bytes more a fetched page, most often a larger malloc chunk.)
constexpr uint8_t kLong = 255;

struct Header {
  std::array<uint32_t, 3> lengths;
  size_t bytes;  // of the header itself
};

Header ReadHeader(const char* packed) {
  Header h{};
  const char* at = packed;
  for (uint32_t& n : h.lengths) {
    const auto first = static_cast<uint8_t>(*at++);
    if (first < kLong) {
      n = first;
    } else {
      std::memcpy(&n, at, sizeof n);
      at += sizeof n;
    }
  }
  h.bytes = static_cast<size_t>(at - packed);
  return h;
}

size_t PackedBytes(const char* packed) {
  const Header h = ReadHeader(packed);
  return h.bytes + h.lengths[0] + h.lengths[1] + h.lengths[2];
}

}  // namespace

PageMeta::PageMeta(const PageMeta& other)
    : content_hash(other.content_hash),
      last_signal_lastmod(other.last_signal_lastmod),
      last_status(other.last_status),
      gone_tries(other.gone_tries),
      flags(other.flags),
      unreachable_since(other.unreachable_since) {
  if (other.packed_ != nullptr) {
    const size_t n = PackedBytes(other.packed_.get());
    packed_ = std::make_unique_for_overwrite<char[]>(n);
    std::memcpy(packed_.get(), other.packed_.get(), n);
  }
}

PageMeta& PageMeta::operator=(const PageMeta& other) {
  if (this != &other) *this = PageMeta(other);
  return *this;
}

std::string_view PageMeta::Field(int i) const {
  if (packed_ == nullptr) return {};
  const Header h = ReadHeader(packed_.get());
  size_t offset = h.bytes;
  for (int k = 0; k < i; ++k) offset += h.lengths[k];
  return {packed_.get() + offset, h.lengths[i]};
}

void PageMeta::Set(int i, std::string_view v) {
  if (Field(i) == v) return;
  std::array<std::string_view, kFields> fields;
  for (int k = 0; k < kFields; ++k) fields[k] = k == i ? v : Field(k);
  Pack(fields);
}

void PageMeta::Pack(const std::array<std::string_view, kFields>& fields) {
  size_t bytes = 0;
  for (std::string_view f : fields) bytes += f.size();
  if (bytes == 0) {
    packed_.reset();
    return;
  }
  size_t header = 0;
  for (std::string_view f : fields) {
    header += f.size() < kLong ? 1 : 1 + sizeof(uint32_t);
  }
  // Built aside: `v` may point into the current block.
  auto packed = std::make_unique_for_overwrite<char[]>(header + bytes);
  char* at = packed.get();
  for (std::string_view f : fields) {
    const auto n = static_cast<uint32_t>(f.size());
    if (n < kLong) {
      *at++ = static_cast<char>(n);
    } else {
      *at++ = static_cast<char>(kLong);
      std::memcpy(at, &n, sizeof n);
      at += sizeof n;
    }
  }
  for (std::string_view f : fields) {
    if (!f.empty()) std::memcpy(at, f.data(), f.size());
    at += f.size();
  }
  packed_ = std::move(packed);
}

}  // namespace freshd::daemon

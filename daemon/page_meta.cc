#include "daemon/page_meta.h"

#include <array>
#include <cstring>
#include <string>

namespace freshd::daemon {

namespace {

constexpr size_t kHeader = 3 * sizeof(uint32_t);

uint32_t Length(const char* packed, int i) {
  uint32_t n;
  std::memcpy(&n, packed + i * sizeof(uint32_t), sizeof n);
  return n;
}

size_t PackedBytes(const char* packed) {
  return kHeader + Length(packed, 0) + Length(packed, 1) + Length(packed, 2);
}

}  // namespace

PageMeta::PageMeta(const PageMeta& other)
    : content_hash(other.content_hash),
      last_signal_lastmod(other.last_signal_lastmod),
      last_status(other.last_status) {
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
  size_t offset = kHeader;
  for (int k = 0; k < i; ++k) offset += Length(packed_.get(), k);
  return {packed_.get() + offset, Length(packed_.get(), i)};
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
  // Built aside: `v` may point into the current block.
  auto packed = std::make_unique_for_overwrite<char[]>(kHeader + bytes);
  size_t offset = kHeader;
  for (int k = 0; k < kFields; ++k) {
    const auto n = static_cast<uint32_t>(fields[k].size());
    std::memcpy(packed.get() + k * sizeof(uint32_t), &n, sizeof n);
    if (n > 0) std::memcpy(packed.get() + offset, fields[k].data(), n);
    offset += n;
  }
  packed_ = std::move(packed);
}

}  // namespace freshd::daemon

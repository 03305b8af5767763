#include "daemon/url_index.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>

namespace freshd::daemon {

namespace {

constexpr size_t kMaxVarint = 10;

size_t PutVarint(char* out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<char>(v);
  return n;
}

// REQUIRES: a varint written by PutVarint at p.
std::string_view ReadEntry(const char* p) {
  uint64_t length = 0;
  int shift = 0;
  for (;;) {
    const auto byte = static_cast<unsigned char>(*p++);
    length |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) break;
    shift += 7;
  }
  return {p, static_cast<size_t>(length)};
}

}  // namespace

std::string_view UrlIndex::url(sched::PageId id) const {
  const uint64_t offset = offsets_[id];
  return ReadEntry(blocks_[offset / kBlockBytes].get() + offset % kBlockBytes);
}

void UrlIndex::Append(std::string_view url) {
  const size_t need = url.size() + kMaxVarint;
  if (block_used_ + need > kBlockBytes) {
    // A new block; a URL longer than a block gets one of its own size, and
    // the next URL starts another.
    blocks_.push_back(
        std::make_unique_for_overwrite<char[]>(std::max(need, kBlockBytes)));
    block_used_ = 0;
  }
  const uint64_t block = blocks_.size() - 1;
  char* at = blocks_.back().get() + block_used_;
  offsets_.push_back(block * kBlockBytes + block_used_);
  const size_t header = PutVarint(at, url.size());
  if (!url.empty()) std::memcpy(at + header, url.data(), url.size());
  block_used_ =
      need > kBlockBytes ? kBlockBytes : block_used_ + header + url.size();
}

size_t UrlIndex::SlotOf(std::string_view url) const {
  return std::hash<std::string_view>()(url) & (table_.size() - 1);
}

void UrlIndex::Grow() {
  std::vector<uint32_t> old = std::move(table_);
  table_.assign(old.empty() ? 16 : 2 * old.size(), kEmpty);
  for (uint32_t id : old) {
    if (id == kEmpty) continue;
    size_t slot = SlotOf(url(id));
    while (table_[slot] != kEmpty) slot = (slot + 1) & (table_.size() - 1);
    table_[slot] = id;
  }
}

void UrlIndex::Insert(sched::PageId id) {
  if (2 * (table_used_ + 1) > table_.size()) Grow();
  const std::string_view u = url(id);
  size_t slot = SlotOf(u);
  while (table_[slot] != kEmpty) {
    if (url(table_[slot]) == u) return;  // a duplicate keeps the first
    slot = (slot + 1) & (table_.size() - 1);
  }
  table_[slot] = id;
  ++table_used_;
}

void UrlIndex::Assign(std::vector<std::string> urls) {
  offsets_.clear();
  offsets_.shrink_to_fit();
  blocks_.clear();
  block_used_ = kBlockBytes;
  table_.clear();
  table_used_ = 0;
  offsets_.reserve(urls.size());
  size_t slots = 16;
  while (slots < 2 * urls.size()) slots *= 2;
  table_.assign(slots, kEmpty);
  for (std::string& u : urls) {
    Append(u);
    std::string().swap(u);  // released as it is copied in
    Insert(static_cast<sched::PageId>(offsets_.size() - 1));
  }
}

bool UrlIndex::Add(std::string_view url) {
  if (Find(url)) return false;
  Append(url);
  Insert(static_cast<sched::PageId>(offsets_.size() - 1));
  return true;
}

void UrlIndex::AddRestored(std::string_view url) {
  Append(url);
  Insert(static_cast<sched::PageId>(offsets_.size() - 1));
}

std::optional<sched::PageId> UrlIndex::Find(std::string_view u) const {
  if (table_.empty()) return std::nullopt;
  for (size_t slot = SlotOf(u);; slot = (slot + 1) & (table_.size() - 1)) {
    const uint32_t id = table_[slot];
    if (id == kEmpty) return std::nullopt;
    if (url(id) == u) return id;
  }
}

}  // namespace freshd::daemon

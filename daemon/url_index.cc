#include "daemon/url_index.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace freshd::daemon {

namespace {

std::string TempDir(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// Reading back what this process wrote to its own unlinked file cannot
// fail but through the machine: not a state to carry on from.
[[noreturn]] void ReadFailed(uint64_t at, int err) {
  std::fprintf(stderr, "freshd: reading the URL file at %llu failed: %s\n",
               static_cast<unsigned long long>(at),
               err != 0 ? std::strerror(err) : "short file");
  std::abort();
}

}  // namespace

UrlIndex::UrlIndex(std::string dir) : dir_(std::move(dir)) {}

UrlIndex::~UrlIndex() {
  if (fd_ >= 0) ::close(fd_);
}

void UrlIndex::Reset() {
  bases_.clear();
  bases_.shrink_to_fit();
  offsets_.clear();
  offsets_.shrink_to_fit();
  std::unordered_map<sched::PageId, uint64_t>().swap(wide_);
  keys_.clear();
  keys_.shrink_to_fit();
  std::string().swap(tail_);
  // The file keeps its old bytes past tail_start_ = 0: they are written
  // over (pwrite at explicit offsets) and never read before.
  tail_start_ = 0;
  flush_at_ = kTailBytes;
  table_.clear();
  table_used_ = 0;
}

void UrlIndex::Flush() {
  if (fd_ < 0 && !open_failed_) {
    std::string path = TempDir(dir_) + "/freshd-urls-XXXXXX";
    fd_ = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd_ >= 0) {
      ::unlink(path.c_str());
    } else {
      open_failed_ = true;
      spdlog::warn("URL file in {}: {}; the URLs stay in memory", path,
                   std::strerror(errno));
    }
  }
  size_t done = 0;
  int err = 0;
  while (fd_ >= 0 && done < tail_.size()) {
    const ssize_t n = ::pwrite(fd_, tail_.data() + done, tail_.size() - done,
                               static_cast<off_t>(tail_start_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  tail_.erase(0, done);
  tail_start_ += done;
  if (tail_.empty()) {
    flush_at_ = kTailBytes;
    if (tail_.capacity() > 2 * kTailBytes) std::string().swap(tail_);
  } else {
    // Not written (no file, a full disk): kept, and tried again once the
    // tail has doubled (not at every URL).
    if (err != 0 && flush_at_ == kTailBytes) {
      spdlog::warn("URL file: {}; {} bytes of URLs kept in memory",
                   std::strerror(err), tail_.size());
    }
    flush_at_ = 2 * tail_.size();
  }
}

void UrlIndex::Read(uint64_t begin, uint64_t end, std::string* out) const {
  out->resize(end - begin);
  char* to = out->data();
  while (begin < end && begin < tail_start_) {
    const uint64_t want = std::min(end, tail_start_) - begin;
    const ssize_t n =
        ::pread(fd_, to, static_cast<size_t>(want), static_cast<off_t>(begin));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ReadFailed(begin, n < 0 ? errno : 0);
    begin += static_cast<uint64_t>(n);
    to += n;
  }
  if (begin < end) {
    std::memcpy(to, tail_.data() + (begin - tail_start_), end - begin);
  }
}

uint64_t UrlIndex::Offset(sched::PageId id) const {
  const uint16_t past = offsets_[id];
  if (past == kWide) return wide_.at(id);
  return bases_[id / kGroup] + past;
}

uint64_t UrlIndex::End(sched::PageId id) const {
  return id + 1 < offsets_.size() ? Offset(id + 1) : tail_start_ + tail_.size();
}

std::string UrlIndex::url(sched::PageId id) const {
  std::string out;
  Read(Offset(id), End(id), &out);
  return out;
}

bool UrlIndex::Equals(sched::PageId id, std::string_view url) const {
  const uint64_t begin = Offset(id);
  const uint64_t end = End(id);
  if (end - begin != url.size()) return false;
  if (begin >= tail_start_) {  // in the tail: no copy
    return std::string_view(tail_).substr(begin - tail_start_, url.size()) ==
           url;
  }
  std::string stored;
  Read(begin, end, &stored);
  return stored == url;
}

void UrlIndex::ForEach(
    const std::function<void(sched::PageId, std::string_view)>& fn) const {
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  std::string chunk, one;
  sched::PageId id = 0;
  const auto n = static_cast<sched::PageId>(offsets_.size());
  auto end_of = [&](sched::PageId i) { return End(i); };
  while (id < n) {
    const uint64_t begin = Offset(id);
    if (begin >= tail_start_) {  // the rest is in the tail
      for (; id < n; ++id) {
        const uint64_t at = Offset(id);
        fn(id,
           std::string_view(tail_).substr(at - tail_start_, end_of(id) - at));
      }
      break;
    }
    if (end_of(id) - begin > kChunk) {  // one URL longer than a chunk
      Read(begin, end_of(id), &one);
      fn(id, one);
      ++id;
      continue;
    }
    // The whole URLs that fit in the next chunk, read at once.
    sched::PageId last = id;
    while (last + 1 < n && end_of(last + 1) - begin <= kChunk) ++last;
    Read(begin, end_of(last), &chunk);
    for (; id <= last; ++id) {
      const uint64_t at = Offset(id);
      fn(id, std::string_view(chunk).substr(at - begin, end_of(id) - at));
    }
  }
}

void UrlIndex::Append(std::string_view url) {
  const uint64_t at = tail_start_ + tail_.size();
  const auto id = static_cast<sched::PageId>(offsets_.size());
  if (id % kGroup == 0) bases_.push_back(at);
  const uint64_t past = at - bases_.back();
  if (past < kWide) {
    offsets_.push_back(static_cast<uint16_t>(past));
  } else {
    offsets_.push_back(kWide);
    wide_.emplace(id, at);
  }
  keys_.push_back(XXH3_64bits(url.data(), url.size()) & key_mask_);
  tail_.append(url);
  if (tail_.size() >= flush_at_) Flush();
}

namespace {

// Slots for `urls` ids at most UrlIndex::kMaxLoad full (at least 16).
size_t SlotsFor(size_t urls, double max_load) {
  return std::max<size_t>(
      16, static_cast<size_t>(static_cast<double>(urls) / max_load) + 1);
}

}  // namespace

void UrlIndex::Rehash(size_t slots) {
  std::vector<uint32_t> old = std::move(table_);
  table_.assign(slots, kEmpty);
  // In the old slots' order: the homes scale with the size, so this
  // inserts in about the new homes' order (short probes).
  for (uint32_t id : old) {
    if (id == kEmpty) continue;
    size_t slot = Home(keys_[id]);
    while (table_[slot] != kEmpty) slot = Next(slot);
    table_[slot] = id;
  }
}

void UrlIndex::Grow() {
  Rehash(table_.empty() ? 16 : table_.size() + table_.size() / 2);
}

void UrlIndex::Reserve(size_t urls) {
  bases_.reserve((urls + kGroup - 1) / kGroup);
  offsets_.reserve(urls);
  keys_.reserve(urls);
  const size_t slots = SlotsFor(urls, kMaxLoad);
  if (table_.size() < slots) Rehash(slots);
}

void UrlIndex::Insert(sched::PageId id) {
  if (static_cast<double>(table_used_ + 1) >
      kMaxLoad * static_cast<double>(table_.size())) {
    Grow();
  }
  const uint64_t key = keys_[id];
  size_t slot = Home(key);
  while (table_[slot] != kEmpty) {
    const uint32_t other = table_[slot];
    // The same key: the same URL (a duplicate keeps the first; see the
    // header for the odds of another URL).
    if (keys_[other] == key) return;
    slot = Next(slot);
  }
  table_[slot] = id;
  ++table_used_;
}

void UrlIndex::Assign(std::vector<std::string> urls) {
  Reset();
  Reserve(urls.size());
  for (std::string& u : urls) {
    Append(u);
    Insert(static_cast<sched::PageId>(offsets_.size() - 1));
    std::string().swap(u);  // released as it is copied in
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

void UrlIndex::Remove(sched::PageId id) {
  if (table_.empty() || id >= keys_.size()) return;
  size_t hole = Home(keys_[id]);
  while (table_[hole] != id) {
    if (table_[hole] == kEmpty) return;
    hole = Next(hole);
  }
  // Each later entry of the run moves back into the hole unless its home
  // lies in (hole, slot] (cyclically): then it is still reachable.
  for (size_t slot = Next(hole); table_[slot] != kEmpty; slot = Next(slot)) {
    const size_t home = Home(keys_[table_[slot]]);
    const bool reachable = hole <= slot ? (hole < home && home <= slot)
                                        : (hole < home || home <= slot);
    if (reachable) continue;
    table_[hole] = table_[slot];
    hole = slot;
  }
  table_[hole] = kEmpty;
  --table_used_;
}

std::optional<sched::PageId> UrlIndex::Find(std::string_view u) const {
  if (table_.empty()) return std::nullopt;
  const uint64_t key = XXH3_64bits(u.data(), u.size()) & key_mask_;
  for (size_t slot = Home(key);; slot = Next(slot)) {
    const uint32_t id = table_[slot];
    if (id == kEmpty) return std::nullopt;
    if (keys_[id] == key) return id;
  }
}

std::optional<sched::PageId> UrlIndex::FindExact(std::string_view u) const {
  std::optional<sched::PageId> id = Find(u);
  if (id && !Equals(*id, u)) return std::nullopt;
  return id;
}

}  // namespace freshd::daemon

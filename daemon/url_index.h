// UrlIndex: the daemon's two-way map between page ids and their normalized
// URLs, the URLs' bytes kept out of the process's memory (issue 29 item 1),
// at ~15-18 bytes a URL in memory (issue 43 item 2; 25-30 before).
//
// An id is a URL's position. The URLs are appended back to back to a file
// (created and at once unlinked in `dir`: nothing is left behind, a restart
// rebuilds it while it streams the store), read back with pread: the OS page
// cache, not the process, holds them. What is kept in memory per URL:
// - where it starts in the file, 2.5 bytes: the offsets grow with the id, so
//   a group of kGroup ids keeps one 8-byte base and each id a 16-bit offset
//   from it (the next id's offset ends a URL); a URL starting 64 KiB or more
//   past its group's base (kGroup URLs of ~4 KiB: never for the daemon's
//   URLs of at most 8 KiB in practice) keeps its full offset in a side map;
// - its 64-bit key (XXH3 of the URL), 8 bytes;
// - 5-7.5 bytes of an open-addressing table of 32-bit ids (linear probing,
//   home slot from the key's high 32 bits scaled to the table's size, which
//   need not be a power of two: at most 80% full, grown by half; Reserve
//   sizes it for a restart's count at 80%) whose probes compare the keys.
// The newest URLs (up to kTailBytes) wait in a small in-memory tail before
// they are written in one pwrite; ids there resolve from memory.
//
// Collisions: the key stands for the URL (no read on a lookup). Two URLs
// with one key would be taken for one: the second would be found as the
// first's id and never added. With XXH3's 64 bits the odds that any two of
// N URLs share a key are ~N^2/2^65: 2.7e-6 at 10M URLs, 2.7e-4 at 100M;
// the cost, a URL never crawled (or its signal given to the other). Read
// back and compared, a lookup cost one pread a hit (4.5 us CPU against
// 0.2 us on the shared test machine, bench/scale/README.md), paid by every
// link the parser hands back: not worth those odds. FindExact compares
// (one read) where an answer about another URL must never be given (the
// operator's /page?url=). A growth rehashes the keys only, with no read.
// Disk trouble degrades, never loses a URL: if the file cannot be created
// or a write fails, the URLs stay in the tail (in memory) and the write is
// retried once the tail has doubled. A failed read of bytes written before
// is an impossible state (the file is private and unlinked): it aborts.
// Not copyable. Not thread-safe (the crawl loop's thread).
#ifndef FRESHD_DAEMON_URL_INDEX_H_
#define FRESHD_DAEMON_URL_INDEX_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sched/observation.h"

namespace freshd::daemon {

class UrlIndex {
 public:
  // The URL file goes in `dir` (empty: $TMPDIR, else /tmp); it is created
  // at the first write.
  explicit UrlIndex(std::string dir = {});
  ~UrlIndex();
  UrlIndex(const UrlIndex&) = delete;
  UrlIndex& operator=(const UrlIndex&) = delete;

  // Replaces the contents: id i is urls[i]. A URL given twice keeps its
  // first id for Find (both ids keep their url()). `urls` is released as
  // it is copied in.
  void Assign(std::vector<std::string> urls);

  // Makes room for `urls` URLs in all: the table is not rehashed, nor the
  // per-URL arrays copied, until there are more.
  void Reserve(size_t urls);

  // Appends `url` as id size(). False (and nothing added) when it is known.
  bool Add(std::string_view url);
  // Appends `url` as id size() even when it is known (recovery, as Assign:
  // Find keeps the first id).
  void AddRestored(std::string_view url);

  // Takes `id` out of the lookup table (a page removed for good): Find no
  // longer answers it, and the same URL added again gets a new id. Its
  // url() stays readable (the file is append-only; a restart drops it).
  // Backward-shift deletion: no tombstone slot, probes stay as short as if
  // it had never been inserted. Unknown ids, or ids not in the table (a
  // duplicate key): nothing.
  void Remove(sched::PageId id);

  // The id whose key is `url`'s (see "Collisions" above; no read).
  std::optional<sched::PageId> Find(std::string_view url) const;
  // The same, checked against the stored URL (one read on a hit).
  std::optional<sched::PageId> FindExact(std::string_view url) const;
  // The URL, read from the file (or the tail). REQUIRES: id < size().
  std::string url(sched::PageId id) const;
  size_t size() const { return keys_.size(); }

  // Every URL in id order, read sequentially in large chunks (a restart's
  // pass over all pages: no read per URL). The view is valid during the
  // call only.
  void ForEach(
      const std::function<void(sched::PageId, std::string_view)>& fn) const;

  // Bytes of URLs written to the file, and waiting in memory (the tail).
  uint64_t file_bytes() const { return tail_start_; }
  size_t tail_bytes() const { return tail_.size(); }

  // The URLs in id order as a random-access range of std::string (each
  // element read as it is accessed).
  class Urls {
   public:
    class Iterator {
     public:
      using iterator_category = std::random_access_iterator_tag;
      using value_type = std::string;
      using difference_type = std::ptrdiff_t;
      using pointer = void;
      using reference = std::string;
      Iterator() = default;
      Iterator(const UrlIndex* index, size_t i) : index_(index), i_(i) {}
      std::string operator*() const {
        return index_->url(static_cast<sched::PageId>(i_));
      }
      std::string operator[](difference_type n) const { return *(*this + n); }
      Iterator& operator++() { return ++i_, *this; }
      Iterator operator++(int) { return {index_, i_++}; }
      Iterator& operator--() { return --i_, *this; }
      Iterator operator--(int) { return {index_, i_--}; }
      Iterator& operator+=(difference_type n) {
        i_ += static_cast<size_t>(n);
        return *this;
      }
      Iterator& operator-=(difference_type n) { return *this += -n; }
      friend Iterator operator+(Iterator a, difference_type n) {
        return a += n;
      }
      friend Iterator operator+(difference_type n, Iterator a) {
        return a += n;
      }
      friend Iterator operator-(Iterator a, difference_type n) {
        return a -= n;
      }
      friend difference_type operator-(const Iterator& a, const Iterator& b) {
        return static_cast<difference_type>(a.i_) -
               static_cast<difference_type>(b.i_);
      }
      friend bool operator==(const Iterator& a, const Iterator& b) {
        return a.i_ == b.i_;
      }
      friend auto operator<=>(const Iterator& a, const Iterator& b) {
        return a.i_ <=> b.i_;
      }

     private:
      const UrlIndex* index_ = nullptr;
      size_t i_ = 0;
    };
    explicit Urls(const UrlIndex* index) : index_(index) {}
    Iterator begin() const { return {index_, 0}; }
    Iterator end() const { return {index_, index_->size()}; }
    size_t size() const { return index_->size(); }
    std::string operator[](size_t i) const {
      return index_->url(static_cast<sched::PageId>(i));
    }

   private:
    const UrlIndex* index_;
  };
  Urls urls() const { return Urls(this); }

  // Test hook: keys keep their low `bits` bits only (call on an empty
  // index), so that distinct URLs share keys.
  void TEST_set_key_bits(int bits) { key_mask_ = (uint64_t{1} << bits) - 1; }

  // The tail is written once it holds this many bytes.
  static constexpr size_t kTailBytes = size_t{64} << 10;

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  // Ids a 64-bit offset base is kept for; each keeps a 16-bit offset.
  static constexpr size_t kGroup = 16;
  static constexpr uint16_t kWide = UINT16_MAX;  // the offset is in wide_
  // The table is grown (by half) past this share of slots in use.
  static constexpr double kMaxLoad = 0.8;

  void Append(std::string_view url);  // the bytes, offset and key only
  void Insert(sched::PageId id);      // into the table (may grow it)
  void Grow();
  void Flush();  // writes the tail (keeps what could not be written)
  void Reset();
  // Reads [begin, end) of the URL stream into *out.
  void Read(uint64_t begin, uint64_t end, std::string* out) const;
  bool Equals(sched::PageId id, std::string_view url) const;
  uint64_t Offset(sched::PageId id) const;  // where id's URL starts
  uint64_t End(sched::PageId id) const;     // where it ends
  size_t Home(uint64_t key) const {  // the key's slot, as its share of 2^32
    return static_cast<size_t>(((key >> 32) * table_.size()) >> 32);
  }
  size_t Next(size_t slot) const {
    return slot + 1 == table_.size() ? 0 : slot + 1;
  }
  void Rehash(size_t slots);  // the table with `slots` slots, same ids

  const std::string dir_;
  int fd_ = -1;  // the unlinked URL file; -1: not created (yet)
  bool open_failed_ = false;
  std::vector<uint64_t> bases_;    // by id / kGroup: the group's offset
  std::vector<uint16_t> offsets_;  // by id: its offset past the base
  std::unordered_map<sched::PageId, uint64_t> wide_;  // kWide ids' offsets
  std::vector<uint64_t> keys_;                        // by id: XXH3 of its URL
  std::string tail_;              // the stream's bytes from tail_start_
  uint64_t tail_start_ = 0;       // == bytes written to the file
  size_t flush_at_ = kTailBytes;  // tail size that triggers a write
  std::vector<uint32_t> table_;   // ids; kEmpty: free. 0 or >= 16 slots
  size_t table_used_ = 0;
  uint64_t key_mask_ = ~uint64_t{0};  // (the test hook's)
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_URL_INDEX_H_

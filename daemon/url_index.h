// UrlIndex: the daemon's two-way map between page ids and their normalized
// URLs, each URL stored once. An id is a URL's position; the URLs' bytes
// live back to back in 1 MiB blocks (a varint length before each, an 8-byte
// offset per id), and the reverse index is an open-addressing table of ids
// (linear probing, at most half full) whose probes compare the URLs they
// name, so a lookup by string_view needs no copy. A URL costs its bytes
// plus ~12 bytes of offset and length plus 8-16 bytes of table, where a
// std::string and a hash-set node cost ~130 bytes at 75 bytes (issue 29).
// Growing the table rehashes every URL (log2 N times in all).
// Not copyable. Not thread-safe (the crawl loop's thread).
#ifndef FRESHD_DAEMON_URL_INDEX_H_
#define FRESHD_DAEMON_URL_INDEX_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/observation.h"

namespace freshd::daemon {

class UrlIndex {
 public:
  UrlIndex() = default;
  UrlIndex(const UrlIndex&) = delete;
  UrlIndex& operator=(const UrlIndex&) = delete;

  // Replaces the contents: id i is urls[i]. A URL given twice keeps its
  // first id for Find (both ids keep their url()). `urls` is released as
  // it is copied in.
  void Assign(std::vector<std::string> urls);

  // Appends `url` as id size(). False (and nothing added) when it is known.
  bool Add(std::string_view url);
  // Appends `url` as id size() even when it is known (recovery, as Assign:
  // Find keeps the first id).
  void AddRestored(std::string_view url);

  std::optional<sched::PageId> Find(std::string_view url) const;
  // Valid while the index lives (blocks never move). REQUIRES: id < size().
  std::string_view url(sched::PageId id) const;
  size_t size() const { return offsets_.size(); }

  // The URLs in id order as a random-access range of string_view (valid
  // while the index lives and does not grow).
  class Urls {
   public:
    class Iterator {
     public:
      using iterator_category = std::random_access_iterator_tag;
      using value_type = std::string_view;
      using difference_type = std::ptrdiff_t;
      using pointer = void;
      using reference = std::string_view;
      Iterator() = default;
      Iterator(const UrlIndex* index, size_t i) : index_(index), i_(i) {}
      std::string_view operator*() const {
        return index_->url(static_cast<sched::PageId>(i_));
      }
      std::string_view operator[](difference_type n) const {
        return *(*this + n);
      }
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
    std::string_view operator[](size_t i) const {
      return index_->url(static_cast<sched::PageId>(i));
    }

   private:
    const UrlIndex* index_;
  };
  Urls urls() const { return Urls(this); }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  static constexpr uint32_t kEmpty = UINT32_MAX;

  void Append(std::string_view url);  // the bytes and the offset only
  void Insert(sched::PageId id);      // into the table (may grow it)
  void Grow();
  size_t SlotOf(std::string_view url) const;  // first probe

  // Offset of id i: block index × kBlockBytes + position in the block.
  std::vector<uint64_t> offsets_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = kBlockBytes;  // bytes used of blocks_.back()
  std::vector<uint32_t> table_;      // ids; kEmpty: free. Size: 0 or 2^k.
  size_t table_used_ = 0;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_URL_INDEX_H_

// PageMeta: the fetch-side durable fields of one page that the page book
// (daemon/page_book.h) keeps beside the scheduler's PageState: the
// validators sent back on the next conditional GET, the content hash a
// change is detected by, the last outcome, and the newest sitemap lastmod
// considered as a signal. Together with the scheduler's saved state they
// make the page's store::PageRecord (daemon/page_codec.h, the one codec);
// recovery fills them from the store, so dispatch never reads the store.
// The last fetch time is not here: the scheduler's PageState keeps it.
// Kept compact because the book holds one per known page (issue 29): 32
// bytes, the three strings packed in one allocation (none for a page never
// fetched) instead of three std::strings (128 bytes before any of them
// allocates).
// Thread-safety: a plain value.

#ifndef FRESHD_DAEMON_PAGE_META_H_
#define FRESHD_DAEMON_PAGE_META_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

namespace freshd::daemon {

class PageMeta {
 public:
  PageMeta() = default;
  PageMeta(std::string_view etag, std::string_view last_modified,
           std::string_view last_outcome) {
    Pack({etag, last_modified, last_outcome});
  }
  PageMeta(const PageMeta& other);
  PageMeta& operator=(const PageMeta& other);
  PageMeta(PageMeta&&) noexcept = default;
  PageMeta& operator=(PageMeta&&) noexcept = default;

  // The strings, valid until the next set_* on this value.
  std::string_view etag() const { return Field(0); }           // If-None-Match
  std::string_view last_modified() const { return Field(1); }  // If-M.-S.
  std::string_view last_outcome() const { return Field(2); }   // "": none
  void set_etag(std::string_view v) { Set(0, v); }
  void set_last_modified(std::string_view v) { Set(1, v); }
  // fetch::OutcomeName, "" before a fetch.
  void set_last_outcome(std::string_view v) { Set(2, v); }

  uint64_t content_hash = 0;       // of the visible text; 0: never fetched
  double last_signal_lastmod = 0;  // Unix seconds, 0: none considered
  int16_t last_status = 0;         // HTTP status (100-999), 0: none
  // Pages gone for good (daemon/page_book.h "Removal"), in what was
  // padding (the value stays 32 bytes); not stored: a restart derives
  // them from the last status (page_codec.h).
  uint8_t gone_tries = 0;  // consecutive 404/410 answers (saturating)
  uint8_t flags = 0;       // kGoneAnnounced
  // Unix seconds of the first DNS/connect failure of the current streak
  // (no HTTP answer since); 0: none.
  uint32_t unreachable_since = 0;

  // A "gone" change-feed event was written for the page's current absence.
  static constexpr uint8_t kGoneAnnounced = 1;

 private:
  static constexpr int kFields = 3;
  std::string_view Field(int i) const;
  void Set(int i, std::string_view v);
  // Replaces every field (one allocation; none when all are empty).
  void Pack(const std::array<std::string_view, kFields>& fields);
  // kFields lengths (one byte each below 255, else 255 and 4 bytes), then
  // the fields' bytes in order; nullptr when every field is empty.
  std::unique_ptr<char[]> packed_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PAGE_META_H_

// PageMeta: the fetch-side fields of one page that the page book
// (daemon/page_book.h) keeps in memory beside the scheduler's PageState:
// the content hash a change is detected by, the last status and outcome,
// the newest sitemap lastmod considered as a signal, the removal streak,
// and what the next dispatch needs to know of the page's validators
// without holding them: whether it has any (kValidators) and its
// Last-Modified as a time (the signals' check and the scheduler's
// previous_last_modified read it).
// The rarely used fields are not here (issue 43 item 2): the validator
// strings (ETag, Last-Modified) and a last outcome outside
// fetch::OutcomeName's set are ColdFields, which live in the page's store
// record once it is durable; the page book holds them only while the
// record is pending commit or the page is in flight, and reads them from
// the store when the page is dispatched. The last outcome is a one-byte
// code. The last fetch time is not here: the scheduler's PageState keeps
// it. Together with the scheduler's saved state and the ColdFields they
// make the page's store::PageRecord (daemon/page_codec.h, the one codec).
// 32 bytes, no heap block: the book holds one per known page (was 32 plus
// a ~32-byte block for every fetched page).
// Thread-safety: a plain value.

#ifndef FRESHD_DAEMON_PAGE_META_H_
#define FRESHD_DAEMON_PAGE_META_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fetch/outcome.h"

namespace freshd::daemon {

// The page record's fields kept out of memory once the record is durable.
struct ColdFields {
  std::string etag;           // If-None-Match
  std::string last_modified;  // If-Modified-Since
  // The last outcome when it is not one of fetch::OutcomeName's (a record
  // written by something else); empty otherwise.
  std::string other_outcome;

  bool has_validators() const {
    return !etag.empty() || !last_modified.empty();
  }
};

class PageMeta {
 public:
  // The last outcome: fetch::OutcomeName of the code, "" before a fetch,
  // and "" too for an outcome outside the set (kOtherOutcome: its string
  // is a ColdField).
  std::string_view last_outcome() const;
  // The code's class; nullopt before a fetch or for another outcome.
  std::optional<fetch::OutcomeClass> last_outcome_class() const;
  bool other_outcome() const { return outcome_ == kOtherOutcome; }
  void set_last_outcome(fetch::OutcomeClass c) {
    outcome_ = static_cast<uint8_t>(static_cast<int>(c) + 1);
  }
  // From a stored string: its class if it names one, "" none, else other.
  void set_last_outcome_name(std::string_view name);

  // The Last-Modified validator as a time (Unix seconds), nullopt when
  // there is none or it does not parse (or falls outside 1970-2106).
  std::optional<double> last_modified_time() const {
    if (last_modified_s_ == 0) return std::nullopt;
    return static_cast<double>(last_modified_s_);
  }
  // Sets the time from the header's text ("" or unparsable: none).
  void set_last_modified(std::string_view http_date);

  uint64_t content_hash = 0;       // of the visible text; 0: never fetched
  double last_signal_lastmod = 0;  // Unix seconds, 0: none considered
  int16_t last_status = 0;         // HTTP status (100-999), 0: none
  // Pages gone for good (daemon/page_book.h "Removal"); not stored: a
  // restart derives them from the last status (page_codec.h).
  uint8_t gone_tries = 0;  // consecutive 404/410 answers (saturating)
  uint8_t flags = 0;       // kGoneAnnounced, kValidators
  // Unix seconds of the first DNS/connect failure of the current streak
  // (no HTTP answer since); 0: none.
  uint32_t unreachable_since = 0;

  // A "gone" change-feed event was written for the page's current absence.
  static constexpr uint8_t kGoneAnnounced = 1;
  // The page has validators (an ETag or a Last-Modified): in the book's
  // memory while its record is pending commit, else in its store record.
  static constexpr uint8_t kValidators = 2;

 private:
  static constexpr uint8_t kNoOutcome = 0;
  static constexpr uint8_t kOtherOutcome = 255;
  uint8_t outcome_ = kNoOutcome;  // OutcomeClass + 1, or the two above
  uint32_t last_modified_s_ = 0;  // Unix seconds; 0: none
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PAGE_META_H_

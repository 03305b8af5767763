// UrlIndex: the daemon's two-way map between page ids and their normalized
// URLs, each URL stored once. An id is a URL's position in a vector; the
// reverse index is a hash set of ids whose hash and equality read the URLs
// they name, so a lookup by string_view needs no copy and a URL costs its
// string plus a set node (~40 bytes), not a second string in a map key.
// Not copyable or movable (the set's functors point at the vector). Not
// thread-safe (the crawl loop's thread).
#ifndef FRESHD_DAEMON_URL_INDEX_H_
#define FRESHD_DAEMON_URL_INDEX_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "sched/observation.h"

namespace freshd::daemon {

class UrlIndex {
 public:
  UrlIndex();
  UrlIndex(const UrlIndex&) = delete;
  UrlIndex& operator=(const UrlIndex&) = delete;

  // Replaces the contents: id i is urls[i]. A URL given twice keeps its
  // first id for Find (both ids keep their url()).
  void Assign(std::vector<std::string> urls);

  // Appends `url` as id size(). False (and nothing added) when it is known.
  bool Add(std::string url);

  std::optional<sched::PageId> Find(std::string_view url) const;
  // REQUIRES: id < size().
  const std::string& url(sched::PageId id) const { return urls_[id]; }
  const std::vector<std::string>& urls() const { return urls_; }
  size_t size() const { return urls_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    const std::vector<std::string>* urls;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>()(s);
    }
    size_t operator()(sched::PageId id) const { return (*this)((*urls)[id]); }
  };
  struct Equal {
    using is_transparent = void;
    const std::vector<std::string>* urls;
    bool operator()(sched::PageId a, sched::PageId b) const {
      return (*urls)[a] == (*urls)[b];
    }
    bool operator()(std::string_view a, sched::PageId b) const {
      return a == (*urls)[b];
    }
    bool operator()(sched::PageId a, std::string_view b) const {
      return (*urls)[a] == b;
    }
  };

  std::vector<std::string> urls_;  // by id
  std::unordered_set<sched::PageId, Hash, Equal> ids_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_URL_INDEX_H_

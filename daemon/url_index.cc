#include "daemon/url_index.h"

#include <utility>

namespace freshd::daemon {

UrlIndex::UrlIndex() : ids_(0, Hash{&urls_}, Equal{&urls_}) {}

void UrlIndex::Assign(std::vector<std::string> urls) {
  ids_.clear();
  urls_ = std::move(urls);
  ids_.reserve(urls_.size());
  for (size_t i = 0; i < urls_.size(); ++i) {
    ids_.insert(static_cast<sched::PageId>(i));  // a duplicate keeps the first
  }
}

bool UrlIndex::Add(std::string url) {
  if (Find(url)) return false;
  urls_.push_back(std::move(url));
  ids_.insert(static_cast<sched::PageId>(urls_.size() - 1));
  return true;
}

std::optional<sched::PageId> UrlIndex::Find(std::string_view url) const {
  auto it = ids_.find(url);
  if (it == ids_.end()) return std::nullopt;
  return *it;
}

}  // namespace freshd::daemon

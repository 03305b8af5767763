#include "daemon/host_book.h"

#include <utility>

namespace freshd::daemon {

HostBook::HostBook(size_t max_hosts) : max_hosts_(max_hosts) {}

Result<sched::HostId> HostBook::Intern(std::string_view name) {
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  if (name.empty() || name.size() > kMaxNameBytes) {
    return Status::InvalidArgument("host table: empty or over-long host name");
  }
  if (names_.size() >= max_hosts_) {
    return Status::ResourceExhausted("host table: max_hosts reached");
  }
  const auto id = static_cast<sched::HostId>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(names_.back(), id);
  return id;
}

std::optional<sched::HostId> HostBook::Find(std::string_view name) const {
  auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

bool HostBook::AddPage(sched::HostId id, uint32_t max_pages) {
  if (pages_.size() <= id) pages_.resize(static_cast<size_t>(id) + 1, 0);
  if (pages_[id] >= max_pages) return false;
  ++pages_[id];
  return true;
}

bool HostBook::SetFetchState(sched::HostId id, std::string encoded) {
  if (fetch_state_.size() <= id)
    fetch_state_.resize(static_cast<size_t>(id) + 1);
  if (fetch_state_[id] == encoded) return false;
  fetch_state_[id] = std::move(encoded);
  return true;
}

}  // namespace freshd::daemon

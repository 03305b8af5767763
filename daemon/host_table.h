// HostTable: the daemon's map between a host's authority string ("host:port",
// parse::UrlAuthority of a normalized URL) and the dense sched::HostId the
// scheduler and its HostPool index by. Ids are assigned 0, 1, 2, … in the
// order names are first interned; they are process-local (never stored): a
// restarted daemon re-interns names as it reads the store
// (daemon/recovery.h). Bounded by max_hosts.
// Not thread-safe: owned by the scheduler's thread.

#ifndef FRESHD_DAEMON_HOST_TABLE_H_
#define FRESHD_DAEMON_HOST_TABLE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "sched/observation.h"

namespace freshd::daemon {

class HostTable {
 public:
  // Longest accepted name (an authority is at most 253 + 1 + 5 bytes).
  static constexpr size_t kMaxNameBytes = 1024;

  explicit HostTable(size_t max_hosts = size_t{1} << 22);

  // The id of `name`, assigning the next one if it is new. InvalidArgument
  // for an empty or over-long name; ResourceExhausted when max_hosts names
  // are already known.
  Result<sched::HostId> Intern(std::string_view name);

  // The id of a known name, or nullopt.
  std::optional<sched::HostId> Find(std::string_view name) const;

  // The name of `id`. REQUIRES: id < size().
  const std::string& Name(sched::HostId id) const { return names_[id]; }

  size_t size() const { return names_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>()(s);
    }
  };

  size_t max_hosts_;
  std::vector<std::string> names_;  // by id
  std::unordered_map<std::string, sched::HostId, Hash, std::equal_to<>> ids_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_HOST_TABLE_H_

// The live members of a cluster, from the heartbeats seen: a member is live
// from a heartbeat until `ttl` seconds after its latest one, or until it
// says it left. Times are the observer's own clock (each node times the
// heartbeats it receives), so no two machines' clocks are ever compared.
// Clock-free: every call is told `now`. Bounded: at most kMaxMembers
// members are tracked; heartbeats of further names are ignored (counted).
// Not thread-safe: one owner thread (cluster/cluster_node.h's).

#ifndef FRESHD_CLUSTER_MEMBERSHIP_H_
#define FRESHD_CLUSTER_MEMBERSHIP_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace freshd::cluster {

inline constexpr size_t kMaxMembers = 1024;

// What a member announces with each heartbeat.
struct MemberInfo {
  std::string node;
  uint32_t shards = 0;    // its [cluster] shards
  double lambda = -1;     // its scheduler's threshold; < 0: not known
  double rate_share = 0;  // pages per second it crawls at
  // What else it announces, a JSON object ("" none): the daemon's
  // pages_known, fetch_rate, pages_fetched, changes, shards_owned.
  std::string summary = "";

  bool operator==(const MemberInfo&) const = default;
};

class Membership {
 public:
  // REQUIRES: ttl_s > 0.
  explicit Membership(double ttl_s) : ttl_s_(ttl_s) {}

  // A heartbeat of `info.node` seen at `now`. False when ignored (a new
  // name past kMaxMembers).
  bool Heard(const MemberInfo& info, double now);
  // `node` announced it left (its entry was deleted).
  void Left(std::string_view node);
  // Forgets members dead at `now` (keeps memory bounded by the live set).
  void Expire(double now);

  bool IsLive(std::string_view node, double now) const;
  // The live members at `now`, sorted by name.
  std::vector<MemberInfo> Live(double now) const;
  // When `node` was last heard; -1 if never (or forgotten).
  double LastHeard(std::string_view node) const;
  uint64_t ignored() const { return ignored_; }

 private:
  struct Entry {
    MemberInfo info;
    double heard = 0;
  };
  double ttl_s_;
  std::map<std::string, Entry, std::less<>> members_;
  uint64_t ignored_ = 0;
};

// Which shards this node may fetch: a shard the assignment gives it is
// acquired only once it has been given it continuously for `handoff_s`
// (so its previous owner, which let it go the moment it learned of the
// change, has stopped fetching it); a shard the assignment takes away is
// released at once. Clock-free; not thread-safe (one owner thread).
class ShardOwnership {
 public:
  ShardOwnership(uint32_t shards, double handoff_s);

  // Applies the assignment `desired` (one flag per shard) at `now`; true
  // when owned() changed. A `desired` of the wrong size releases all.
  bool Update(const std::vector<bool>& desired, double now);
  // Releases every shard at once and forgets pending acquisitions (the
  // node lost the cluster: it cannot tell what it still owns).
  bool ReleaseAll();

  const std::vector<bool>& owned() const { return owned_; }
  size_t owned_count() const { return owned_count_; }
  // Shards given to this node and not yet acquired.
  size_t pending_count() const;

 private:
  double handoff_s_;
  std::vector<bool> owned_;
  std::vector<double> desired_since_;  // < 0: not desired
  size_t owned_count_ = 0;
};

}  // namespace freshd::cluster

#endif  // FRESHD_CLUSTER_MEMBERSHIP_H_

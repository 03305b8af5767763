// A one-shot read of a cluster's member bucket (cluster/cluster_node.h
// writes it): every node's latest heartbeat, for `freshd cluster status`.
// Entries live `ttl` in the bucket, so what is listed heartbeated within
// about a ttl. Thread-safety: a free function; safe from any thread.

#ifndef FRESHD_CLUSTER_MEMBER_LIST_H_
#define FRESHD_CLUSTER_MEMBER_LIST_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "cluster/membership.h"

namespace freshd::cluster {

struct ListedMember {
  MemberInfo info;
  // Seconds since the server stored the heartbeat (the server's clock
  // against this machine's: approximate across machines).
  double age_s = 0;
};

// Connects to `nats_url`, reads every entry of `bucket`, sorted by node,
// waiting at most `timeout_s` per call. NotFound when the bucket does not
// exist (no node ever joined), IOError when NATS cannot be reached.
Result<std::vector<ListedMember>> ListMembers(const std::string& nats_url,
                                              const std::string& bucket,
                                              double timeout_s);

}  // namespace freshd::cluster

#endif  // FRESHD_CLUSTER_MEMBER_LIST_H_

// Which shard a host is in, and which live node owns each shard: the two
// pure functions every node of a cluster evaluates alike, so the nodes agree
// on ownership without a leader (docs/DESIGN.md "Scale-out").
//
// A host (the URL's authority as the daemon keys politeness, e.g.
// "h3.test:8080") hashes to one of `shards` shards with XXH64 under a fixed
// seed: stable across processes, machines and releases. A shard belongs to
// the member with the highest XXH64(node, shard) score (rendezvous or
// highest-random-weight hashing, Thaler & Ravishankar 1998), ties to the
// smaller name: when a member leaves, only its shards move, and when one
// joins, it takes shards only from the others, about shards/n of them.
// Thread-safety: pure functions, safe from any thread.

#ifndef FRESHD_CLUSTER_SHARD_MAP_H_
#define FRESHD_CLUSTER_SHARD_MAP_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace freshd::cluster {

// The shard of `host`, in [0, shards). REQUIRES: shards > 0.
uint32_t ShardOf(std::string_view host, uint32_t shards);

// The rendezvous score of `node` for `shard` (higher wins).
uint64_t RendezvousScore(std::string_view node, uint32_t shard);

// For every shard, the index in `members` of its owner; empty when
// `members` is. Duplicated names count once (the first). O(shards x members).
std::vector<uint32_t> AssignShards(std::span<const std::string> members,
                                   uint32_t shards);

// Which shards `self` owns among `members` (all false when `self` is not
// one of them).
std::vector<bool> OwnedShards(std::string_view self,
                              std::span<const std::string> members,
                              uint32_t shards);

// The set shards `owned` flags as ranges, "0-3,7,9-12" ("" for none): how
// /status shows a node's shards.
std::string FormatShardRanges(const std::vector<bool>& owned);

}  // namespace freshd::cluster

#endif  // FRESHD_CLUSTER_SHARD_MAP_H_

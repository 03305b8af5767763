#include "cluster/shard_map.h"

#include <xxhash.h>

#include <cstring>

namespace freshd::cluster {
namespace {

// Fixed forever: changing either moves every host or shard.
constexpr uint64_t kHostSeed = 0x6672657368642d68;   // "freshd-h"
constexpr uint64_t kShardSeed = 0x6672657368642d73;  // "freshd-s"

}  // namespace

uint32_t ShardOf(std::string_view host, uint32_t shards) {
  return static_cast<uint32_t>(XXH64(host.data(), host.size(), kHostSeed) %
                               shards);
}

uint64_t RendezvousScore(std::string_view node, uint32_t shard) {
  // node bytes, a 0 byte, the shard as 4 little-endian bytes: no two
  // (node, shard) pairs share an input.
  std::string input(node);
  input.push_back('\0');
  for (int i = 0; i < 4; ++i) {
    input.push_back(static_cast<char>((shard >> (8 * i)) & 0xff));
  }
  return XXH64(input.data(), input.size(), kShardSeed);
}

std::vector<uint32_t> AssignShards(std::span<const std::string> members,
                                   uint32_t shards) {
  std::vector<uint32_t> owner;
  if (members.empty()) return owner;
  owner.resize(shards);
  for (uint32_t s = 0; s < shards; ++s) {
    uint32_t best = 0;
    uint64_t best_score = RendezvousScore(members[0], s);
    for (uint32_t m = 1; m < members.size(); ++m) {
      const uint64_t score = RendezvousScore(members[m], s);
      if (score > best_score ||
          (score == best_score && members[m] < members[best])) {
        best = m;
        best_score = score;
      }
    }
    owner[s] = best;
  }
  return owner;
}

std::vector<bool> OwnedShards(std::string_view self,
                              std::span<const std::string> members,
                              uint32_t shards) {
  std::vector<bool> owned(shards, false);
  uint32_t self_index = 0;
  bool found = false;
  for (uint32_t m = 0; m < members.size(); ++m) {
    if (members[m] == self) {
      self_index = m;
      found = true;
      break;
    }
  }
  if (!found) return owned;
  const std::vector<uint32_t> owner = AssignShards(members, shards);
  for (uint32_t s = 0; s < shards; ++s) owned[s] = owner[s] == self_index;
  return owned;
}

std::string FormatShardRanges(const std::vector<bool>& owned) {
  std::string out;
  for (size_t s = 0; s < owned.size();) {
    if (!owned[s]) {
      ++s;
      continue;
    }
    size_t end = s;
    while (end + 1 < owned.size() && owned[end + 1]) ++end;
    if (!out.empty()) out += ',';
    out += std::to_string(s);
    if (end > s) out += "-" + std::to_string(end);
    s = end + 1;
  }
  return out;
}

}  // namespace freshd::cluster

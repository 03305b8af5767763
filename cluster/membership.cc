#include "cluster/membership.h"

namespace freshd::cluster {

bool Membership::Heard(const MemberInfo& info, double now) {
  auto it = members_.find(info.node);
  if (it == members_.end()) {
    if (members_.size() >= kMaxMembers) {
      ++ignored_;
      return false;
    }
    it = members_.emplace(info.node, Entry{}).first;
  }
  it->second.info = info;
  it->second.heard = now;
  return true;
}

void Membership::Left(std::string_view node) {
  auto it = members_.find(node);
  if (it != members_.end()) members_.erase(it);
}

void Membership::Expire(double now) {
  for (auto it = members_.begin(); it != members_.end();) {
    if (now - it->second.heard >= ttl_s_) {
      it = members_.erase(it);
    } else {
      ++it;
    }
  }
}

bool Membership::IsLive(std::string_view node, double now) const {
  auto it = members_.find(node);
  return it != members_.end() && now - it->second.heard < ttl_s_;
}

std::vector<MemberInfo> Membership::Live(double now) const {
  std::vector<MemberInfo> live;
  for (const auto& [name, e] : members_) {
    if (now - e.heard < ttl_s_) live.push_back(e.info);
  }
  return live;
}

double Membership::LastHeard(std::string_view node) const {
  auto it = members_.find(node);
  return it == members_.end() ? -1 : it->second.heard;
}

ShardOwnership::ShardOwnership(uint32_t shards, double handoff_s)
    : handoff_s_(handoff_s),
      owned_(shards, false),
      desired_since_(shards, -1) {}

bool ShardOwnership::Update(const std::vector<bool>& desired, double now) {
  if (desired.size() != owned_.size()) return ReleaseAll();
  bool changed = false;
  for (size_t s = 0; s < owned_.size(); ++s) {
    if (!desired[s]) {
      desired_since_[s] = -1;
      if (owned_[s]) {
        owned_[s] = false;
        --owned_count_;
        changed = true;
      }
      continue;
    }
    if (owned_[s]) continue;
    if (desired_since_[s] < 0) desired_since_[s] = now;
    if (now - desired_since_[s] >= handoff_s_) {
      owned_[s] = true;
      ++owned_count_;
      changed = true;
    }
  }
  return changed;
}

bool ShardOwnership::ReleaseAll() {
  const bool changed = owned_count_ > 0;
  owned_.assign(owned_.size(), false);
  desired_since_.assign(desired_since_.size(), -1);
  owned_count_ = 0;
  return changed;
}

size_t ShardOwnership::pending_count() const {
  size_t n = 0;
  for (size_t s = 0; s < owned_.size(); ++s) {
    if (!owned_[s] && desired_since_[s] >= 0) ++n;
  }
  return n;
}

}  // namespace freshd::cluster

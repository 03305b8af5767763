#include "daemon/push_clients.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "base/ascii.h"

namespace freshd::daemon {
namespace {

// `ip` as 16 bytes (IPv4 mapped into ::ffff:0:0/96); nullopt if not an
// address literal. `v4` tells which it was.
std::optional<std::array<unsigned char, 16>> Address16(std::string_view ip,
                                                       bool* v4 = nullptr) {
  std::string text(TrimAsciiBlanks(ip));
  if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  std::array<unsigned char, 16> out{};
  unsigned char four[4];
  if (inet_pton(AF_INET, text.c_str(), four) == 1) {
    out[10] = out[11] = 0xff;
    std::memcpy(out.data() + 12, four, 4);
    if (v4 != nullptr) *v4 = true;
    return out;
  }
  if (inet_pton(AF_INET6, text.c_str(), out.data()) == 1) {
    if (v4 != nullptr) *v4 = false;
    return out;
  }
  return std::nullopt;
}

}  // namespace

Result<TrustedProxies> TrustedProxies::Create(
    const std::vector<std::string>& cidrs) {
  TrustedProxies out;
  for (const std::string& cidr : cidrs) {
    const size_t slash = cidr.find('/');
    bool v4 = false;
    auto bytes = Address16(std::string_view(cidr).substr(0, slash), &v4);
    Status bad = Status::InvalidArgument(
        "[push] trusted_proxies: \"" + cidr +
        "\" is not an IP address or CIDR such as 10.0.0.0/8");
    if (!bytes) return bad;
    Range r;
    r.bytes = *bytes;
    r.bits = 128;
    if (slash != std::string::npos) {
      const std::string len = cidr.substr(slash + 1);
      if (len.empty() || len.size() > 3 ||
          len.find_first_not_of("0123456789") != std::string::npos) {
        return bad;
      }
      const int n = std::stoi(len);
      if (n > (v4 ? 32 : 128)) return bad;
      r.bits = v4 ? 96 + n : n;
    }
    out.ranges_.push_back(r);
  }
  return out;
}

bool TrustedProxies::Contains(std::string_view ip) const {
  auto bytes = Address16(ip);
  if (!bytes) return false;
  for (const Range& r : ranges_) {
    const int whole = r.bits / 8, rest = r.bits % 8;
    if (std::memcmp(bytes->data(), r.bytes.data(), whole) != 0) continue;
    if (rest != 0) {
      const unsigned char mask = static_cast<unsigned char>(0xff << (8 - rest));
      if (((*bytes)[whole] & mask) != (r.bytes[whole] & mask)) continue;
    }
    return true;
  }
  return false;
}

std::string TrustedProxies::ClientOf(std::string_view peer,
                                     std::string_view forwarded_for) const {
  std::string client(peer);
  if (!Contains(client)) return client;
  // Right to left: each trusted hop vouches for the one before it.
  while (!forwarded_for.empty()) {
    const size_t comma = forwarded_for.rfind(',');
    const std::string_view hop = TrimAsciiBlanks(
        comma == std::string_view::npos ? forwarded_for
                                        : forwarded_for.substr(comma + 1));
    forwarded_for = comma == std::string_view::npos
                        ? std::string_view()
                        : forwarded_for.substr(0, comma);
    if (!Address16(hop)) return client;  // garbage: the last sure hop
    client = std::string(hop);
    if (!Contains(client)) return client;
  }
  return client;
}

ClientRateLimiter::ClientRateLimiter(double per_minute, size_t max_clients)
    : per_minute_(per_minute), max_clients_(std::max<size_t>(1, max_clients)) {}

double ClientRateLimiter::Refilled(const Bucket& b, double now) const {
  return std::min(per_minute_,
                  b.tokens + std::max(0.0, now - b.at) * per_minute_ / 60);
}

bool ClientRateLimiter::Allow(const std::string& client, double now) {
  auto it = buckets_.find(client);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_clients_ && now - last_sweep_ >= 1) {
      last_sweep_ = now;
      std::erase_if(buckets_, [&](const auto& entry) {
        return Refilled(entry.second, now) >= per_minute_;
      });
    }
    if (buckets_.size() >= max_clients_) return false;
    it = buckets_.emplace(client, Bucket{per_minute_, now}).first;
  }
  Bucket& b = it->second;
  b.tokens = Refilled(b, now);
  b.at = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

}  // namespace freshd::daemon

#include "store/keys.h"

#include <cmath>

#include "base/coding.h"

namespace freshd::store {

std::string PageKey(uint64_t url_key, std::string_view url) {
  std::string key;
  key.reserve(9 + url.size());
  key.push_back(kPagePrefix);
  PutBigEndian64(&key, url_key);
  key.append(url);
  return key;
}

std::string HostKey(std::string_view host) {
  std::string key(1, kHostPrefix);
  key.append(host);
  return key;
}

std::string FeedKey(uint64_t seq) {
  std::string key(1, kFeedPrefix);
  PutBigEndian64(&key, seq);
  return key;
}

std::string SketchKey(uint64_t url_key, std::string_view url) {
  std::string key = PageKey(url_key, url);
  key[0] = kSketchPrefix;
  return key;
}

std::string DigestKey(std::string_view payload_digest) {
  std::string key(1, kDigestPrefix);
  key.append(payload_digest);
  return key;
}

std::string DigestOrderKey(uint64_t seq) {
  std::string key(1, kDigestOrderPrefix);
  PutBigEndian64(&key, seq);
  return key;
}

std::string LastCaptureKey(uint64_t url_key, std::string_view url) {
  std::string key = PageKey(url_key, url);
  key[0] = kLastCapturePrefix;
  return key;
}

std::string AliasKey(uint64_t url_key, std::string_view url) {
  std::string key = PageKey(url_key, url);
  key[0] = kAliasPrefix;
  return key;
}

bool ParseAliasKey(std::string_view key, uint64_t* url_key, std::string* url) {
  if (key.size() < 9 || key[0] != kAliasPrefix) return false;
  *url_key = DecodeBigEndian64(key.data() + 1);
  url->assign(key.substr(9));
  return true;
}

bool ParsePageKey(std::string_view key, uint64_t* url_key, std::string* url) {
  if (key.size() < 9 || key[0] != kPagePrefix) return false;
  *url_key = DecodeBigEndian64(key.data() + 1);
  url->assign(key.substr(9));
  return true;
}

bool ParseHostKey(std::string_view key, std::string* host) {
  if (key.empty() || key[0] != kHostPrefix) return false;
  host->assign(key.substr(1));
  return true;
}

std::string ControlKey(char kind, std::string_view target) {
  std::string key(1, kControlPrefix);
  key.push_back(kind);
  key.append(target);
  return key;
}

bool ParseControlKey(std::string_view key, char* kind, std::string* target) {
  if (key.size() < 3 || key[0] != kControlPrefix) return false;
  *kind = key[1];
  target->assign(key.substr(2));
  return true;
}

std::string SubscriptionKey(std::string_view id) {
  std::string key(1, kSubscriptionPrefix);
  key.append(id);
  return key;
}

bool ParseSubscriptionKey(std::string_view key, std::string* id) {
  if (key.size() < 2 || key[0] != kSubscriptionPrefix) return false;
  id->assign(key.substr(1));
  return true;
}

}  // namespace freshd::store

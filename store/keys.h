// LevelDB key layout of the store (see store/README.md). Every key starts
// with a one-byte type prefix so record kinds occupy disjoint ranges:
//   'V'                                  schema version
//   'K'                                  installation hash secret (fixed64)
//   'C'                                  page count (varint)
//   'Q'                                  commit sequence number (varint)
//   'D'                                  damage note (varint pages, string)
//   'P' be64(url_key) url                page record
//   'H' host                             host record
//   'F'                                  next change-feed sequence number
//   'E' be64(seq)                        change-feed event
//   'G' be64(url_key) url                a page's newest text sketch (feed)
//   'W' payload digest                   WARC digest index: first capture
//   'X' be64(seq)                        digest index eviction order
//   'L' be64(url_key) url                a page's last WARC capture
//   'O' kind target                      an operator control (kind 'h': a
//                                        host, 'p': a URL pattern;
//                                        store/control_table.h)
//   'U' callback id                      a WebSub subscription
//                                        (store/subscription_table.h)
//   'A' be64(url_key) url                an alias: a duplicate URL
//                                        collapsed into a page
//                                        (store/alias_table.h)
// Big-endian integers make key order numeric order. Retired, never to be
// reused: 'S' (signal log entries) and 'N' (their sequence number), which no
// freshd wrote; migration 1 -> 2 deletes them (store/migrations.h).
// Thread-safety: pure functions.

#ifndef FRESHD_STORE_KEYS_H_
#define FRESHD_STORE_KEYS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace freshd::store {

inline constexpr char kSchemaKey[] = "V";
inline constexpr char kHashSecretKey[] = "K";
inline constexpr char kPageCountKey[] = "C";
inline constexpr char kCommitSeqKey[] = "Q";
inline constexpr char kDamageNoteKey[] = "D";
inline constexpr char kPagePrefix = 'P';
inline constexpr char kHostPrefix = 'H';
inline constexpr char kFeedSeqKey[] = "F";
inline constexpr char kFeedPrefix = 'E';
inline constexpr char kSketchPrefix = 'G';
inline constexpr char kDigestPrefix = 'W';
inline constexpr char kDigestOrderPrefix = 'X';
inline constexpr char kLastCapturePrefix = 'L';
inline constexpr char kControlPrefix = 'O';
inline constexpr char kSubscriptionPrefix = 'U';
inline constexpr char kAliasPrefix = 'A';

std::string PageKey(uint64_t url_key, std::string_view url);
std::string HostKey(std::string_view host);
std::string FeedKey(uint64_t seq);
std::string SketchKey(uint64_t url_key, std::string_view url);
std::string DigestKey(std::string_view payload_digest);
std::string DigestOrderKey(uint64_t seq);
std::string LastCaptureKey(uint64_t url_key, std::string_view url);
// An operator control's key: 'O', the kind byte, the target.
std::string ControlKey(char kind, std::string_view target);
// A WebSub subscription's key: 'U', the callback id.
std::string SubscriptionKey(std::string_view id);
// An alias's key: 'A', be64(url_key), the alias URL (as a page key).
std::string AliasKey(uint64_t url_key, std::string_view url);

// Splits a page key; false if `key` is not a well-formed page key.
bool ParsePageKey(std::string_view key, uint64_t* url_key, std::string* url);
// Splits a host key; false if malformed.
bool ParseHostKey(std::string_view key, std::string* host);
// Splits a control key; false if malformed (no kind byte, empty target).
bool ParseControlKey(std::string_view key, char* kind, std::string* target);
// Splits an alias key; false if malformed.
bool ParseAliasKey(std::string_view key, uint64_t* url_key, std::string* url);
// Splits a subscription key; false if malformed (empty id).
bool ParseSubscriptionKey(std::string_view key, std::string* id);

}  // namespace freshd::store

#endif  // FRESHD_STORE_KEYS_H_

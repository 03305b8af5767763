// HostAddresses: the IP address of each host authority ("name[:port]"),
// for per-IP politeness ([politeness] per_ip). A name comes from the
// [fetch] resolve table or is an IP literal (answered at once), else it is
// looked up with Boost.Asio's async resolver (first address; "" if it does
// not resolve) and `on_ready(host)` runs on the io thread when it is known.
// Answers are cached for kTtlS; at most kMaxEntries hosts are remembered.
// Only for politeness accounting: curl resolves again at connect time and
// the SSRF guard checks that address.
// Not thread-safe: use on the io_context thread.

#ifndef FRESHD_FETCH_HOST_ADDRESSES_H_
#define FRESHD_FETCH_HOST_ADDRESSES_H_

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace freshd::fetch {

class HostAddresses {
 public:
  static constexpr double kTtlS = 300;
  static constexpr size_t kMaxEntries = 1 << 16;
  using ReadyFn = std::function<void(const std::string& host)>;

  // `io` must outlive this object; `resolve` is [fetch] resolve.
  HostAddresses(boost::asio::io_context& io,
                std::map<std::string, std::string> resolve, ReadyFn on_ready);

  // The address of `host` if known and fresh ("" = unresolvable).
  // Otherwise nullopt, and a lookup starts unless one is under way;
  // on_ready(host) follows (never from inside Lookup).
  std::optional<std::string> Lookup(const std::string& host);

  // True while a lookup of `host` is under way.
  bool Pending(const std::string& host) const;

 private:
  struct Entry {
    std::string ip;
    double expires = 0;
  };
  static double Now();  // steady clock, seconds
  void Store(const std::string& host, std::string ip);

  boost::asio::io_context& io_;
  const std::map<std::string, std::string> resolve_;
  ReadyFn on_ready_;
  std::unordered_map<std::string, Entry> cache_;
  std::unordered_set<std::string> pending_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

// Splits an authority into host name (brackets of a v6 literal removed) and
// port ("80" when absent).
void SplitAuthority(const std::string& authority, std::string* name,
                    std::string* port);

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_HOST_ADDRESSES_H_

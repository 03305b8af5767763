#include "fetch/host_addresses.h"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>

#include "base/clock.h"

namespace freshd::fetch {

namespace asio = boost::asio;

void SplitAuthority(const std::string& authority, std::string* name,
                    std::string* port) {
  *name = authority;
  *port = "80";
  size_t colon = authority.rfind(':');
  if (colon != std::string::npos &&
      authority.find(']', colon) == std::string::npos &&
      (authority.front() == '[' ||
       authority.find(':') == colon)) {  // not a bare v6 literal
    *name = authority.substr(0, colon);
    *port = authority.substr(colon + 1);
  }
  if (name->size() > 2 && name->front() == '[' && name->back() == ']') {
    *name = name->substr(1, name->size() - 2);
  }
}

HostAddresses::HostAddresses(asio::io_context& io,
                             std::map<std::string, std::string> resolve,
                             ReadyFn on_ready)
    : io_(io), resolve_(std::move(resolve)), on_ready_(std::move(on_ready)) {}

bool HostAddresses::Pending(const std::string& host) const {
  return pending_.count(host) != 0;
}

double HostAddresses::Now() { return SteadyNow(); }

void HostAddresses::Store(const std::string& host, std::string ip) {
  if (cache_.size() >= kMaxEntries) cache_.clear();
  cache_[host] = Entry{std::move(ip), Now() + kTtlS};
}

std::optional<std::string> HostAddresses::Lookup(const std::string& host) {
  auto it = cache_.find(host);
  if (it != cache_.end() && it->second.expires > Now()) return it->second.ip;
  std::string name, port;
  SplitAuthority(host, &name, &port);
  if (auto t = resolve_.find(name); t != resolve_.end()) {
    Store(host, t->second);
    return t->second;
  }
  boost::system::error_code ec;
  asio::ip::address literal = asio::ip::make_address(name, ec);
  if (!ec) {
    Store(host, literal.to_string());
    return literal.to_string();
  }
  if (!pending_.insert(host).second) return std::nullopt;
  auto resolver = std::make_shared<asio::ip::tcp::resolver>(io_);
  std::weak_ptr<char> alive = alive_;
  resolver->async_resolve(
      name, port,
      [this, alive, host, resolver](
          const boost::system::error_code& rec,
          const asio::ip::tcp::resolver::results_type& results) {
        if (alive.expired()) return;
        std::string ip;
        if (!rec && !results.empty()) {
          ip = results.begin()->endpoint().address().to_string();
        }
        pending_.erase(host);
        Store(host, std::move(ip));
        if (on_ready_) on_ready_(host);
      });
  return std::nullopt;
}

}  // namespace freshd::fetch

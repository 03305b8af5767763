// ProxyRoutes: which egress proxy, if any, a host's requests go through
// ([fetch] proxy, overridden per host by a [[rule]] host rule's `proxy`:
// "direct" or another proxy URL; the first host rule with a proxy that
// covers the host decides, so robots.txt goes the way its host's pages
// go), and the proxy credentials read from [fetch] proxy_credentials_file
// ("user:password" on its first line). The file is refused when group or
// others may read or write it; its content never appears in a message.
// Immutable after Create: const methods are thread-safe.

#ifndef FRESHD_FETCH_PROXY_ROUTES_H_
#define FRESHD_FETCH_PROXY_ROUTES_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "conf/config.h"

namespace freshd::fetch {

// (host pattern of a [[rule]], its proxy: "direct" or a URL).
using HostProxy = std::pair<std::string, std::string>;

// The host rules of `rules` that set a proxy, in file order.
std::vector<HostProxy> HostProxiesFromRules(
    const std::vector<RuleConfig>& rules);

class ProxyRoutes {
 public:
  ProxyRoutes() = default;

  // Reads the credentials file if `config` names one (NotFound if it cannot
  // be read, InvalidArgument if group/others may read it or it holds no
  // "user:password"). URLs are taken as validated by ValidateConfig.
  [[nodiscard]] static Result<ProxyRoutes> Create(
      const FetchConfig& config, std::vector<HostProxy> host_proxies);

  // The proxy URL for `host`'s requests; "" = direct.
  const std::string& For(std::string_view host) const;

  const std::string& user() const { return user_; }
  const std::string& password() const { return password_; }

 private:
  std::string default_proxy_;
  std::vector<HostProxy> host_proxies_;
  std::string user_, password_;
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_PROXY_ROUTES_H_

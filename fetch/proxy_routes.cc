#include "fetch/proxy_routes.h"

#include "conf/rules.h"
#include "fetch/private_file.h"

namespace freshd::fetch {

namespace {

const std::string kDirect;  // "" = no proxy
constexpr size_t kMaxCredentialBytes = 4096;

}  // namespace

std::vector<HostProxy> HostProxiesFromRules(
    const std::vector<RuleConfig>& rules) {
  std::vector<HostProxy> out;
  for (const RuleConfig& r : rules) {
    if (!r.host.empty() && !r.proxy.empty()) out.emplace_back(r.host, r.proxy);
  }
  return out;
}

Result<ProxyRoutes> ProxyRoutes::Create(const FetchConfig& config,
                                        std::vector<HostProxy> host_proxies) {
  ProxyRoutes routes;
  routes.default_proxy_ = config.proxy;
  routes.host_proxies_ = std::move(host_proxies);
  const std::string& path = config.proxy_credentials_file;
  if (path.empty()) return routes;
  const std::string where = "[fetch] proxy_credentials_file " + path;
  Result<std::string> text = ReadPrivateFile(path, where, kMaxCredentialBytes);
  if (!text.ok()) return text.status();
  std::string line = text->substr(0, text->find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
    line.pop_back();
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::InvalidArgument(
        where + ": the first line must be \"user:password\"");
  }
  routes.user_ = line.substr(0, colon);
  routes.password_ = line.substr(colon + 1);
  return routes;
}

const std::string& ProxyRoutes::For(std::string_view host) const {
  for (const HostProxy& hp : host_proxies_) {
    if (RuleHostMatches(hp.first, host)) {
      return hp.second == "direct" ? kDirect : hp.second;
    }
  }
  return default_proxy_;
}

}  // namespace freshd::fetch

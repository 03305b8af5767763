#include "fetch/proxy_routes.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "conf/rules.h"

namespace freshd::fetch {

namespace {

const std::string kDirect;  // "" = no proxy

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
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Status::NotFound(where + ": cannot be read");
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o",
                  static_cast<unsigned>(st.st_mode & 07777));
    return Status::InvalidArgument(where +
                                   ": group or others may read it (mode " +
                                   mode + "); refused: chmod 600 it");
  }
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return Status::NotFound(where + ": cannot be read");
  }
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

#include "cli/preflight.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "daemon/seeds.h"
#include "fetch/crawler.h"
#include "fetch/origin_credentials.h"
#include "fetch/proxy_routes.h"

namespace freshd::cli {
namespace fs = std::filesystem;

// Where the package puts freshd.toml and seeds.txt (packaging/).
constexpr char kInstalledConfigDir[] = "/etc/freshd/";

Status CheckSeedsFile(const Config& config, const std::string& seeds_path) {
  const std::string path =
      seeds_path.empty() ? config.crawler.seeds : seeds_path;
  if (path.empty()) return Status::OK();
  Status seeds = daemon::ForEachSeedInFile(
      path, [](const daemon::Seed&) { return Status::OK(); });
  if (!seeds.ok()) {
    std::string message = "[crawler] seeds: " + seeds.message();
    // systemd/freshd.toml, checked in a checkout, names the file the
    // package installs: say so, and where a checkout's copy is.
    std::error_code ec;
    if (path.rfind(kInstalledConfigDir, 0) == 0 && !fs::exists(path, ec)) {
      message +=
          " (the installed default: the freshd package installs it; without "
          "the package, set [crawler] seeds in a copy of this config to a "
          "seeds file of your own, e.g. packaging/seeds.txt in a checkout)";
    }
    return Status::InvalidArgument(message);
  }
  return Status::OK();
}

Status CheckWarcDir(const Config& config) {
  const std::string& dir = config.store.warc_dir;
  if (dir.empty()) return Status::OK();
  auto fail = [&](const std::string& what) {
    return Status::InvalidArgument("[store] warc_dir: " + dir + ": " + what);
  };
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  if (ec) return fail(ec.message());
  // The directory itself, or the nearest ancestor that exists.
  bool exists = true;
  while (!fs::exists(p, ec)) {
    if (ec) return fail(ec.message());
    exists = false;
    if (!p.has_relative_path()) break;
    p = p.parent_path();
  }
  if (!fs::is_directory(p, ec)) {
    return fail(exists ? "not a directory"
                       : p.string() + " is not a directory, cannot create it");
  }
  if (access(p.c_str(), W_OK | X_OK) != 0) {
    return fail(exists ? std::string("not writable: ") + std::strerror(errno)
                       : "cannot be created: " + p.string() +
                             " is not writable: " + std::strerror(errno));
  }
  return Status::OK();
}

namespace {

// Whether a freshd status endpoint answers at `addr`: GET /status names the
// daemon's version (or says it is recovering). Bounded: 2 s each way, 64 KiB.
bool FreshdAnswersAt(const sockaddr_storage& addr, socklen_t len) {
  const int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const timeval timeout{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  std::string reply;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) == 0) {
    const std::string request =
        "GET /status HTTP/1.0\r\nHost: localhost\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t n = 0;
      while (reply.size() < (64 << 10) &&
             (n = recv(fd, buf, sizeof buf, 0)) > 0) {
        reply.append(buf, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  return reply.starts_with("HTTP/1.") &&
         (reply.find("\"version\"") != std::string::npos ||
          reply.find("\"recovering\"") != std::string::npos);
}

}  // namespace

namespace {

// An "IP:PORT" listen value as a socket address; false when it is not one.
bool ListenAddress(const std::string& listen, sockaddr_storage* addr,
                   socklen_t* len) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
  }
  const int port = std::atoi(listen.c_str() + colon + 1);
  *addr = {};
  auto* v4 = reinterpret_cast<sockaddr_in*>(addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(addr);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *v4;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof *v6;
  } else {
    return false;
  }
  return true;
}

// Binds `addr` and releases it at once; 0 or the errno of the failure.
int TryBind(const sockaddr_storage& addr, socklen_t len) {
  const int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  // As the listeners' acceptors do, so that a port in TIME_WAIT after a
  // restart is not reported busy.
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const int rc = bind(fd, reinterpret_cast<const sockaddr*>(&addr), len);
  const int err = rc == 0 ? 0 : errno;
  close(fd);
  return err;
}

// `key`'s address `listen` can be bound now, or is held by the running
// freshd whose status endpoint answers at `status_addr` (the daemon this
// config is checked for before a reload, which keeps its listeners).
Status CheckOneListener(const std::string& key, const std::string& listen,
                        const sockaddr_storage& status_addr,
                        socklen_t status_len) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (!ListenAddress(listen, &addr, &len)) {
    return Status::InvalidArgument(key + ": " + listen + ": not an IP:PORT");
  }
  const int err = TryBind(addr, len);
  if (err == 0) return Status::OK();
  if (err == EADDRINUSE && FreshdAnswersAt(status_addr, status_len)) {
    return Status::OK();
  }
  std::string hint;
  if (err == EADDRINUSE) hint = " (another process, or freshd itself?)";
  if (err == EADDRNOTAVAIL) hint = " (no local interface has it)";
  return Status::InvalidArgument(key + ": cannot bind " + listen + ": " +
                                 std::strerror(err) + hint);
}

}  // namespace

Status CheckListenAddress(const Config& config) {
  sockaddr_storage status_addr{};
  socklen_t status_len = 0;
  if (!ListenAddress(config.status.listen, &status_addr, &status_len)) {
    return Status::InvalidArgument("[status] listen: " + config.status.listen +
                                   ": not an IP:PORT");
  }
  Status s = CheckOneListener("[status] listen", config.status.listen,
                              status_addr, status_len);
  if (!s.ok() || config.push.listen.empty()) return s;
  return CheckOneListener("[push] listen", config.push.listen, status_addr,
                          status_len);
}

Status CheckCredentialFiles(const Config& config) {
  const fetch::CrawlerOptions o = fetch::CrawlerOptionsFromConfig(config);
  Result<fetch::ProxyRoutes> proxies =
      fetch::ProxyRoutes::Create(config.fetch, {});
  if (!proxies.ok()) return Status::InvalidArgument(proxies.status().message());
  Result<fetch::OriginCredentials> credentials =
      fetch::OriginCredentials::Create(o.fetcher.origin_rules,
                                       o.fetcher.credentials_directory);
  if (!credentials.ok()) {
    return Status::InvalidArgument(credentials.status().message());
  }
  return Status::OK();
}

Status Preflight(const Config& config) {
  for (Status s : {CheckSeedsFile(config), CheckWarcDir(config),
                   CheckCredentialFiles(config), CheckListenAddress(config)}) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status CreateWarcDir(const Config& config) {
  const std::string& dir = config.store.warc_dir;
  if (dir.empty()) return Status::OK();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return Status::InvalidArgument("[store] warc_dir: cannot create " + dir +
                                   ": " + ec.message());
  }
  return Status::OK();
}

}  // namespace freshd::cli

#include "daemon/sd_notify.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace freshd::daemon {

bool SdNotify(std::string_view state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t len = std::strlen(path);
  if (len >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path, len);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // abstract socket
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const ssize_t sent =
      sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
             reinterpret_cast<sockaddr*>(&addr),
             static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  close(fd);
  return sent == static_cast<ssize_t>(state.size());
}

double WatchdogPeriodS() {
  const char* usec = std::getenv("WATCHDOG_USEC");
  if (usec == nullptr) return 0;
  const char* pid = std::getenv("WATCHDOG_PID");
  if (pid != nullptr && std::strtoll(pid, nullptr, 10) != getpid()) return 0;
  char* end = nullptr;
  const unsigned long long us = std::strtoull(usec, &end, 10);
  if (end == usec || *end != '\0') return 0;
  return static_cast<double>(us) / 1e6;
}

bool StderrIsJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

TimeoutExtender::TimeoutExtender(double period_s) {
  if (std::getenv("NOTIFY_SOCKET") == nullptr) return;
  const auto period = std::chrono::duration<double>(period_s);
  const std::string extend =
      "EXTEND_TIMEOUT_USEC=" +
      std::to_string(static_cast<uint64_t>(period_s * 3e6));
  thread_ = std::thread([this, period, extend] {
    std::unique_lock<std::mutex> lock(mu_);
    do {
      SdNotify(extend);
    } while (!cv_.wait_for(lock, period, [this] { return done_; }));
  });
}

TimeoutExtender::~TimeoutExtender() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace freshd::daemon

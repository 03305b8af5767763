#include "daemon/sd_notify.h"

#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace freshd::daemon {

bool SdNotify(std::string_view state) {
  // sd_notify returns 0 without $NOTIFY_SOCKET, < 0 when the send failed.
  return sd_notify(/*unset_environment=*/0, std::string(state).c_str()) > 0;
}

double WatchdogPeriodS() {
  uint64_t usec = 0;
  // > 0: WATCHDOG_USEC is set and valid, and WATCHDOG_PID unset or ours.
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) <= 0) return 0;
  return static_cast<double>(usec) / 1e6;
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

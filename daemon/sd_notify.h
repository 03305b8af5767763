// The systemd side of the daemon, over libsystemd's sd-daemon(3):
// sd_notify(3) (one datagram per state to $NOTIFY_SOCKET), the watchdog
// period the unit asks for (sd_watchdog_enabled(3): WatchdogSec= sets
// WATCHDOG_USEC, and WATCHDOG_PID when the main process is not us), and
// whether stderr is the journal (JOURNAL_STREAM names the device:inode of
// the stream systemd connected; sd-daemon(3) has no call for it). Outside
// systemd every call is a no-op that says so.
// Thread-safety: every function is safe from any thread (no state but the
// TimeoutExtender's own).

#ifndef FRESHD_DAEMON_SD_NOTIFY_H_
#define FRESHD_DAEMON_SD_NOTIFY_H_

#include <condition_variable>
#include <mutex>
#include <string_view>
#include <thread>

namespace freshd::daemon {

// Sends `state` (e.g. "READY=1", "STATUS=...") to $NOTIFY_SOCKET. False when
// the variable is unset or the send fails (nothing to report to).
bool SdNotify(std::string_view state);

// The watchdog period in seconds when the unit set WatchdogSec= for this
// process (WATCHDOG_USEC set, WATCHDOG_PID unset or ours); 0 otherwise.
double WatchdogPeriodS();

// True when stderr is the stream JOURNAL_STREAM names: log lines may then
// carry "<N>" syslog priority prefixes (sd-daemon(3)).
bool StderrIsJournal();

// While alive, tells systemd every `period_s` to wait `period_s` × 3 more
// (EXTEND_TIMEOUT_USEC), so a long start (recovery of a big store) is not
// killed by TimeoutStartSec=. Nothing is sent without $NOTIFY_SOCKET.
class TimeoutExtender {
 public:
  explicit TimeoutExtender(double period_s);
  ~TimeoutExtender();  // stops and joins
  TimeoutExtender(const TimeoutExtender&) = delete;
  TimeoutExtender& operator=(const TimeoutExtender&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_SD_NOTIFY_H_

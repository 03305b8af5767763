// The daemon's log as an operator reads it: the process's default spdlog
// logger on stderr, and the one-line progress summary the log prints every
// [log] progress and systemd shows as the unit's STATUS=.
// Under systemd (stderr is the journal: daemon/sd_notify.h
// StderrIsJournal) each line starts with its syslog priority, "<3>" error
// … "<7>" debug (sd-daemon(3)), and carries no time stamp of its own (the
// journal adds one); elsewhere a line is "TIME LEVEL message".
// Thread-safety: InstallLogger before the daemon's threads start;
// ProgressLine is a pure function.

#ifndef FRESHD_DAEMON_OPERATOR_LOG_H_
#define FRESHD_DAEMON_OPERATOR_LOG_H_

#include <nlohmann/json.hpp>
#include <string>

#include "spdlog/common.h"

namespace freshd::daemon {

// Makes "freshd" on stderr the default logger at `level` (a [log] level
// name); `journal`: with "<N>" prefixes and no time stamps.
void InstallLogger(const std::string& level, bool journal);

// The syslog priority of an spdlog level (trace and debug: 7, info: 6,
// warn: 4, error: 3, critical: 2).
int SyslogPriority(spdlog::level::level_enum level);

// "1234 pages, 980 fetched, 4.9/5 pages/s, est. freshness 0.912, errors
// 4xx=3 dns=1" from a /status JSON (CrawlLoop::StatusJson).
std::string ProgressLine(const nlohmann::json& status);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_OPERATOR_LOG_H_

// The operator's pieces, each alone: sd_notify datagrams on a real unix
// socket, the watchdog and journal environment, journald priorities, the
// progress line, the Prometheus text writer and process_* families, the
// fetch metrics (histogram, codes, first error per class per host, bounded
// recent list) and the status history ring.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "daemon/fetch_metrics.h"
#include "daemon/operator_log.h"
#include "daemon/prometheus_text.h"
#include "daemon/sd_notify.h"
#include "daemon/status_history.h"

namespace freshd::daemon {
namespace {

// A unix datagram socket bound to a fresh path, NOTIFY_SOCKET set to it.
class NotifySocket {
 public:
  NotifySocket() {
    path_ = ::testing::TempDir() + "notify-" + std::to_string(getpid());
    unlink(path_.c_str());
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{2, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    unsetenv("NOTIFY_SOCKET");
    close(fd_);
    unlink(path_.c_str());
  }
  std::string Receive() {
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, n) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
};

TEST(SdNotifyTest, SendsOneDatagramPerStateAndNothingWithoutSocket) {
  unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(SdNotify("READY=1"));
  NotifySocket socket;
  EXPECT_TRUE(SdNotify("READY=1"));
  EXPECT_TRUE(SdNotify("STATUS=12 pages"));
  EXPECT_EQ(socket.Receive(), "READY=1");
  EXPECT_EQ(socket.Receive(), "STATUS=12 pages");
}

TEST(SdNotifyTest, TimeoutExtenderSendsAtOnceAndStopsWhenDestroyed) {
  NotifySocket socket;
  {
    TimeoutExtender extender(0.05);
    EXPECT_EQ(socket.Receive(), "EXTEND_TIMEOUT_USEC=150000");
    EXPECT_EQ(socket.Receive(), "EXTEND_TIMEOUT_USEC=150000");
  }
  SdNotify("READY=1");
  // Whatever the extender sent before it stopped comes first.
  std::string got;
  while ((got = socket.Receive()) == "EXTEND_TIMEOUT_USEC=150000") {
  }
  EXPECT_EQ(got, "READY=1");
}

TEST(SdNotifyTest, WatchdogPeriodOnlyForThisProcess) {
  unsetenv("WATCHDOG_PID");
  unsetenv("WATCHDOG_USEC");
  EXPECT_EQ(WatchdogPeriodS(), 0);
  setenv("WATCHDOG_USEC", "30000000", 1);
  EXPECT_DOUBLE_EQ(WatchdogPeriodS(), 30);
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  EXPECT_DOUBLE_EQ(WatchdogPeriodS(), 30);
  setenv("WATCHDOG_PID", "1", 1);  // another process's watchdog
  EXPECT_EQ(WatchdogPeriodS(), 0);
  unsetenv("WATCHDOG_PID");
  setenv("WATCHDOG_USEC", "soon", 1);
  EXPECT_EQ(WatchdogPeriodS(), 0);
  unsetenv("WATCHDOG_USEC");
}

TEST(SdNotifyTest, JournalStreamMustNameStderr) {
  unsetenv("JOURNAL_STREAM");
  EXPECT_FALSE(StderrIsJournal());
  struct stat st {};
  ASSERT_EQ(fstat(STDERR_FILENO, &st), 0);
  const std::string mine =
      std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  setenv("JOURNAL_STREAM", mine.c_str(), 1);
  EXPECT_TRUE(StderrIsJournal());
  setenv("JOURNAL_STREAM", "1:2", 1);  // a stream stderr is not (any more)
  EXPECT_FALSE(StderrIsJournal());
  unsetenv("JOURNAL_STREAM");
}

TEST(OperatorLogTest, SyslogPrioritiesAndProgressLine) {
  EXPECT_EQ(SyslogPriority(spdlog::level::err), 3);
  EXPECT_EQ(SyslogPriority(spdlog::level::warn), 4);
  EXPECT_EQ(SyslogPriority(spdlog::level::info), 6);
  EXPECT_EQ(SyslogPriority(spdlog::level::debug), 7);
  nlohmann::json s = {{"pages_known", 120},
                      {"pages_fetched_total", 80},
                      {"rate_actual", 4.5},
                      {"rate_target", 5},
                      {"estimated_freshness", 0.9123},
                      {"in_flight", {{"total", 2}}},
                      {"errors", {{"4xx", 3}, {"dns", 1}}}};
  EXPECT_EQ(ProgressLine(s),
            "120 pages, 80 fetched, 4.5/5 pages/s, est. freshness 0.912, 2 "
            "in flight, errors 4xx=3 dns=1");
  s["errors"] = nlohmann::json::object();
  EXPECT_NE(ProgressLine(s).find("no errors"), std::string::npos);
}

TEST(PrometheusTextTest, EscapesHelpAndLabelValues) {
  PrometheusText t;
  t.Family("x_total", "counter", "a\\b\nc");
  t.Sample("x_total", {{"url", "a\"b\\c\nd"}}, 3);
  t.Sample("x_total", {}, 1.0 / 0.0);
  EXPECT_EQ(t.text(),
            "# HELP x_total a\\\\b\\nc\n# TYPE x_total counter\n"
            "x_total{url=\"a\\\"b\\\\c\\nd\"} 3\nx_total +Inf\n");
}

TEST(PrometheusTextTest, ProcessFamiliesReadFromProc) {
  PrometheusText t;
  AppendProcessMetrics(t);
  AppendBuildInfo(t, "1.2.3");
  for (const char* family :
       {"process_cpu_seconds_total ", "process_resident_memory_bytes ",
        "process_open_fds ", "process_max_fds ", "process_start_time_seconds ",
        "freshd_build_info{version=\"1.2.3\""}) {
    EXPECT_NE(t.text().find(std::string("\n") + family), std::string::npos)
        << family << "\n"
        << t.text();
  }
  // The start time is in the past, and not before 2020.
  const size_t at = t.text().find("\nprocess_start_time_seconds ");
  const double start = std::stod(t.text().substr(at + 28));
  EXPECT_GT(start, 1.5e9);
  EXPECT_LE(start, static_cast<double>(time(nullptr)) + 1);
}

fetch::FetchResult Result(fetch::OutcomeClass c, int status, double s,
                          uint64_t bytes) {
  fetch::FetchResult r;
  r.url = "http://h/" + std::to_string(status);
  r.outcome = c;
  r.status = status;
  r.elapsed_s = s;
  r.bytes = bytes;
  return r;
}

TEST(FetchMetricsTest, HistogramCodesAndFirstErrorPerClassPerHost) {
  using fetch::OutcomeClass;
  FetchMetrics m;
  EXPECT_FALSE(m.Record(0, Result(OutcomeClass::kOk, 200, 0.003, 100), 1));
  EXPECT_FALSE(m.Record(0, Result(OutcomeClass::kOk, 200, 0.2, 50), 2));
  EXPECT_TRUE(m.Record(0, Result(OutcomeClass::kHttp4xx, 404, 0.02, 0), 3));
  EXPECT_FALSE(m.Record(0, Result(OutcomeClass::kHttp4xx, 410, 0.02, 0), 4));
  EXPECT_TRUE(m.Record(1, Result(OutcomeClass::kHttp4xx, 404, 0.02, 0), 5));
  EXPECT_TRUE(m.Record(0, Result(OutcomeClass::kDns, 0, 40, 0), 6));
  // Never contacted: no latency.
  EXPECT_TRUE(m.Record(0, Result(OutcomeClass::kRobotsDenied, 0, 0, 0), 7));
  PrometheusText t;
  m.AppendText(t);
  const std::string& x = t.text();
  EXPECT_NE(x.find("freshd_fetch_duration_seconds_bucket{le=\"0.005\"} 1\n"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("freshd_fetch_duration_seconds_bucket{le=\"0.25\"} 5\n"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("freshd_fetch_duration_seconds_bucket{le=\"30\"} 5\n"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("freshd_fetch_duration_seconds_bucket{le=\"+Inf\"} 6\n"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("freshd_fetch_duration_seconds_count 6\n"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("freshd_fetched_bytes_total 150\n"), std::string::npos);
  EXPECT_NE(x.find("freshd_http_responses_total{code=\"200\"} 2\n"),
            std::string::npos);
  EXPECT_NE(x.find("freshd_http_responses_total{code=\"404\"} 2\n"),
            std::string::npos);
  EXPECT_EQ(m.host(0).fetches, 6u);
  EXPECT_EQ(m.host(0).errors, 4u);
  EXPECT_TRUE(m.host(0).last_host_error == false);  // robots-denied last
  EXPECT_EQ(m.host(7).fetches, 0u);
  for (int i = 0; i < 200; ++i) {
    m.Record(2, Result(OutcomeClass::kOk, 200, 0.01, 1), 10 + i);
  }
  EXPECT_EQ(m.recent().size(), kRecentFetches);
  EXPECT_EQ(m.recent().back().unix_time, 209);
}

TEST(FetchMetricsTest, NoResponseYetStillShowsTheFamily) {
  FetchMetrics m;
  PrometheusText t;
  m.AppendText(t);
  EXPECT_NE(t.text().find("freshd_http_responses_total{code=\"other\"} 0\n"),
            std::string::npos);
  EXPECT_NE(t.text().find("freshd_fetch_duration_seconds_count 0\n"),
            std::string::npos);
}

TEST(StatusHistoryTest, RingKeepsTheNewestPointsInOrderAndAddsTheLiveOne) {
  StatusHistory h(3);
  EXPECT_TRUE(h.Due(100));
  for (int i = 0; i < 5; ++i) {
    h.Add({100.0 + 10 * i, 5, 4, 0.5, static_cast<double>(i)});
  }
  EXPECT_FALSE(h.Due(145));
  EXPECT_TRUE(h.Due(150));
  EXPECT_EQ(h.size(), 3u);
  nlohmann::json j = h.Json({151, 5, 5, 0.6, 9});
  ASSERT_EQ(j["points"].size(), 4u);
  EXPECT_EQ(j["points"][0][0], 120);
  EXPECT_EQ(j["points"][2][0], 140);
  EXPECT_EQ(j["points"][3][0], 151);
  EXPECT_EQ(j["points"][3][4], 9);
  EXPECT_EQ(StatusHistory().Json({}).at("step_s"), kHistoryStepS);
}

}  // namespace
}  // namespace freshd::daemon

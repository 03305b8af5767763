// LoopLagProbe: how long other work holds an io_context's thread. A timer
// armed every `period` seconds records how late it fires; Stats() reports
// the largest and the 99th-percentile lateness over the last `window`
// seconds of samples (a fixed ring, window / period of them). What an
// operator reads in /status as loop_lag_ms: a stall of the crawl loop (a
// large sitemap, a selection horizon refresh, a status pass) shows up here.
// Start/Stop run on the io_context's thread; stats() is safe from any thread
// (the status thread reads the network thread's probe). Stop() before the
// io_context goes away (the destructor cancels too).

#ifndef FRESHD_DAEMON_LOOP_LAG_PROBE_H_
#define FRESHD_DAEMON_LOOP_LAG_PROBE_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <mutex>
#include <vector>

namespace freshd::daemon {

class LoopLagProbe {
 public:
  struct Stats {
    double max_s = 0;  // 0 with no samples yet
    double p99_s = 0;
    size_t samples = 0;
  };

  // REQUIRES: period > 0, window >= period.
  LoopLagProbe(boost::asio::io_context& io, double period_s = 0.1,
               double window_s = 60);
  ~LoopLagProbe();

  void Start();
  void Stop();
  Stats stats() const;

 private:
  void Arm();

  boost::asio::steady_timer timer_;
  double period_s_;
  mutable std::mutex mu_;
  std::vector<double> ring_;  // lateness samples, seconds; guarded by mu_
  size_t next_ = 0;           // ring_ slot written next; guarded by mu_
  size_t count_ = 0;          // samples held (<= ring_.size()); ditto
  bool running_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_LOOP_LAG_PROBE_H_

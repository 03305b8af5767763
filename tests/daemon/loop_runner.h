// Helpers shared by the CrawlLoop tests: run a loop until a condition holds
// (bounded in time) and stop it cleanly; read a Prometheus sample.
// Header-only (every tests/daemon/*_test.cc is its own executable).

#ifndef FRESHD_TESTS_DAEMON_LOOP_RUNNER_H_
#define FRESHD_TESTS_DAEMON_LOOP_RUNNER_H_

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "daemon/crawl_loop.h"

namespace freshd::daemon::testing {

// Runs `io` for at least `min_seconds` and until `done()` (checked every
// 100 ms) or `max_seconds`, then stops the loop cleanly.
inline void RunLoopUntil(boost::asio::io_context& io, CrawlLoop& loop,
                         double min_seconds, double max_seconds,
                         const std::function<bool()>& done) {
  boost::asio::steady_timer timer(io);
  const auto start = std::chrono::steady_clock::now();
  Status stopped = Status::Internal("not stopped");
  std::function<void()> check = [&] {
    timer.expires_after(std::chrono::milliseconds(100));
    timer.async_wait([&](boost::system::error_code) {
      const double elapsed = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
      if (elapsed < max_seconds && (elapsed < min_seconds || !done())) {
        return check();
      }
      loop.Stop(5, [&](Status s) {
        stopped = s;
        io.stop();
      });
    });
  };
  check();
  loop.Start();
  io.run();
  io.restart();
  EXPECT_TRUE(stopped.ok()) << stopped.ToString();
}

// A loop on `io` with `config`, seeded with `seed`; nullptr, with a test
// failure, when it does not start or take the seed.
inline std::unique_ptr<CrawlLoop> SeededLoop(boost::asio::io_context& io,
                                             const Config& config,
                                             const std::string& seed) {
  auto loop = CrawlLoop::Create(io, config);
  EXPECT_TRUE(loop.ok()) << loop.status().ToString();
  if (!loop.ok()) return nullptr;
  Status seeded = loop.value()->AddSeed(seed, 1);
  EXPECT_TRUE(seeded.ok()) << seeded.ToString();
  return seeded.ok() ? std::move(loop).value() : nullptr;
}

// The value of the unlabelled Prometheus sample `name` in `text`, or NaN.
inline double MetricValue(const std::string& text, const std::string& name) {
  const std::string prefix = "\n" + name + " ";
  size_t at = text.find(prefix);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + prefix.size(), nullptr);
}

}  // namespace freshd::daemon::testing

#endif  // FRESHD_TESTS_DAEMON_LOOP_RUNNER_H_

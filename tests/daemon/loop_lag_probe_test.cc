// LoopLagProbe on a real io_context: a handler that holds the thread shows
// up as the probe timer's lateness; the window keeps a bounded number of
// samples.

#include "daemon/loop_lag_probe.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <thread>

namespace freshd::daemon {
namespace {

namespace asio = boost::asio;

// Runs `io` for `seconds`, then stops it.
void RunFor(asio::io_context& io, double seconds) {
  asio::steady_timer stop(io);
  stop.expires_after(
      std::chrono::milliseconds(static_cast<int>(seconds * 1000)));
  stop.async_wait([&](boost::system::error_code) { io.stop(); });
  io.run();
  io.restart();
}

TEST(LoopLagProbeTest, NoSamplesBeforeItRuns) {
  asio::io_context io;
  LoopLagProbe probe(io, 0.01, 1);
  EXPECT_EQ(probe.stats().samples, 0u);
  EXPECT_EQ(probe.stats().max_s, 0);
}

TEST(LoopLagProbeTest, AHeldThreadIsMeasured) {
  asio::io_context io;
  LoopLagProbe probe(io, 0.01, 10);
  probe.Start();
  asio::steady_timer hold(io);
  hold.expires_after(std::chrono::milliseconds(50));
  hold.async_wait([](boost::system::error_code) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  });
  RunFor(io, 0.4);
  LoopLagProbe::Stats s = probe.stats();
  // The probe timer due during the 150 ms hold fired at least 140 ms late.
  EXPECT_GE(s.max_s, 0.14);
  EXPECT_LE(s.p99_s, s.max_s);
  EXPECT_GE(s.samples, 5u);
  probe.Stop();
  const size_t samples = s.samples;
  RunFor(io, 0.1);
  EXPECT_EQ(probe.stats().samples, samples);  // stopped: no more samples
}

TEST(LoopLagProbeTest, TheWindowBoundsTheSamples) {
  asio::io_context io;
  LoopLagProbe probe(io, 0.005, 0.05);  // 10 samples kept
  probe.Start();
  RunFor(io, 0.3);
  EXPECT_EQ(probe.stats().samples, 10u);
}

}  // namespace
}  // namespace freshd::daemon

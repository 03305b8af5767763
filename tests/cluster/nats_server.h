// A real nats-server with JetStream for a test (tests/cluster/nats_process.h)
// that reports a failure to start to GoogleTest: a test that needs it FAILS,
// not skips, when nats-server is not installed (CI installs it:
// scripts/install-deps.sh). Not thread-safe: one test thread.

#ifndef FRESHD_TESTS_CLUSTER_NATS_SERVER_H_
#define FRESHD_TESTS_CLUSTER_NATS_SERVER_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "tests/cli/run_command.h"
#include "tests/cluster/nats_process.h"

namespace freshd::testing {

class NatsServer : public NatsProcess {
 public:
  explicit NatsServer(const std::filesystem::path& dir) : NatsProcess(dir) {
    if (!ok()) ADD_FAILURE() << error();
  }
};

// A test with its own nats-server, its store in a fresh directory
// (`name`_<pid> under the test temp dir): started in SetUp, stopped and
// removed in TearDown.
class NatsServerTest : public ::testing::Test {
 protected:
  explicit NatsServerTest(std::string name) : name_(std::move(name)) {}
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           (name_ + "_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    nats_ = std::make_unique<NatsServer>(dir_);
    ASSERT_TRUE(nats_->ok());
  }
  void TearDown() override {
    nats_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<NatsServer> nats_;

 private:
  std::string name_;
};

}  // namespace freshd::testing

#endif  // FRESHD_TESTS_CLUSTER_NATS_SERVER_H_

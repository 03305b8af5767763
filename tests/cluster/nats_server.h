// A real nats-server with JetStream for a test (tests/cluster/nats_process.h)
// that reports a failure to start to GoogleTest: a test that needs it FAILS,
// not skips, when nats-server is not installed (CI installs it:
// scripts/install-deps.sh). Not thread-safe: one test thread.

#ifndef FRESHD_TESTS_CLUSTER_NATS_SERVER_H_
#define FRESHD_TESTS_CLUSTER_NATS_SERVER_H_

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli/run_command.h"
#include "tests/cluster/nats_process.h"

namespace freshd::testing {

class NatsServer : public NatsProcess {
 public:
  explicit NatsServer(const std::filesystem::path& dir) : NatsProcess(dir) {
    if (!ok()) ADD_FAILURE() << error();
  }
};

}  // namespace freshd::testing

#endif  // FRESHD_TESTS_CLUSTER_NATS_SERVER_H_

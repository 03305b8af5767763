// Runs freshd (a daemon or the test web) as a child process for CLI tests:
// stdout on a pipe, stderr to a file, optional extra environment; a
// minimal HTTP/1.0 GET on loopback; and TestWebFixture, a fresh directory
// and `freshd testweb` (sim/webs/noisy.toml) on loopback for each test.
// Not thread-safe: one test thread.

#ifndef FRESHD_TESTS_CLI_DAEMON_CHILD_H_
#define FRESHD_TESTS_CLI_DAEMON_CHILD_H_

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/cli/run_command.h"

namespace freshd::testing {

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;
  std::string err_path;
};

// Starts FRESHD_BINARY with `args`, stdout on a pipe, stderr to `err`, with
// `env` added to the environment. `journal_stderr`: JOURNAL_STREAM names
// the stderr file, as systemd sets it for a unit logging to the journal.
inline Child Spawn(
    const std::vector<std::string>& args, const std::string& err,
    const std::vector<std::pair<std::string, std::string>>& env = {},
    bool journal_stderr = false) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    FILE* e = std::fopen(err.c_str(), "w");
    if (e != nullptr) dup2(fileno(e), 2);
    close(fds[0]);
    for (const auto& [name, value] : env) {
      setenv(name.c_str(), value.c_str(), 1);
    }
    struct stat st {};
    if (journal_stderr && fstat(2, &st) == 0) {
      setenv(
          "JOURNAL_STREAM",
          (std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino)).c_str(),
          1);
    }
    std::vector<char*> argv{const_cast<char*>(FRESHD_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(FRESHD_BINARY, argv.data());
    _exit(127);
  }
  close(fds[1]);
  return Child{pid, fdopen(fds[0], "r"), err};
}

// Waits for the child; its exit code, or 128 + the signal that ended it.
inline int Wait(Child& c) {
  int status = 0;
  waitpid(c.pid, &status, 0);
  if (c.out != nullptr) std::fclose(c.out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The body of GET `path`; "" when nothing answered.
inline std::string HttpGet(uint16_t port, const std::string& path) {
  std::string out = HttpGetResponse(port, path);
  size_t body = out.find("\r\n\r\n");
  return body == std::string::npos ? "" : out.substr(body + 4);
}

// A test directory and `freshd testweb` serving noisy.toml (a day is 20 s)
// on an ephemeral loopback port, both gone after the test.
class TestWebFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           (std::string(::testing::UnitTest::GetInstance()
                            ->current_test_info()
                            ->test_suite_name()) +
            "_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    web_ = Spawn({"testweb", "--web", FRESHD_SOURCE_DIR "/sim/webs/noisy.toml",
                  "--listen", "127.0.0.1:0", "--day-seconds", "20"},
                 (dir_ / "testweb.err").string());
    char line[1024] = {};
    ASSERT_NE(std::fgets(line, sizeof line, web_.out), nullptr);
    web_port_ = nlohmann::json::parse(line)["port"].get<uint16_t>();
  }
  void TearDown() override {
    if (web_.pid > 0) {
      kill(web_.pid, SIGTERM);
      Wait(web_);
    }
    std::filesystem::remove_all(dir_);
  }

  // Polls GET /status on status_port_ until `ok` holds for the running
  // daemon's status or `timeout_s` passes; the last such status read (null
  // if none). The answers of a start still recovering the store
  // ({"state": "recovering"}) are skipped: `ok` sees the loop's status only.
  nlohmann::json StatusWhen(
      const std::function<bool(const nlohmann::json&)>& ok, double timeout_s) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(int(timeout_s * 1000));
    nlohmann::json last;
    while (std::chrono::steady_clock::now() < deadline) {
      std::string body = HttpGet(status_port_, "/status");
      nlohmann::json status = nlohmann::json::parse(body, nullptr, false);
      if (!body.empty() && status.is_object() &&
          status.value("state", "") != "recovering") {
        last = std::move(status);
        if (ok(last)) return last;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return last;
  }

  std::filesystem::path dir_;
  Child web_;
  uint16_t web_port_ = 0;
  uint16_t status_port_ = 0;
};

}  // namespace freshd::testing

#endif  // FRESHD_TESTS_CLI_DAEMON_CHILD_H_

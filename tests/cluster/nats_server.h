// A real nats-server with JetStream for a test: started on a free loopback
// port with its store in a fresh directory, stopped (SIGTERM, then SIGKILL)
// and its directory removed when the object goes. A test that needs it
// FAILS, not skips, when nats-server is not installed (CI installs it:
// scripts/install-deps.sh). Not thread-safe: one test thread.

#ifndef FRESHD_TESTS_CLUSTER_NATS_SERVER_H_
#define FRESHD_TESTS_CLUSTER_NATS_SERVER_H_

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/run_command.h"

namespace freshd::testing {

// The nats-server binary: on PATH, or where Debian installs it; "" if none.
inline std::string FindNatsServer() {
  std::vector<std::string> dirs = {"/usr/sbin", "/usr/bin", "/usr/local/bin",
                                   "/usr/local/sbin"};
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      if (end > start) dirs.insert(dirs.begin(), p.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const auto& d : dirs) {
    std::string candidate = d + "/nats-server";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// True once something accepts on 127.0.0.1:`port`.
inline bool PortAccepts(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

class NatsServer {
 public:
  // Starts the server; check ok() (a failure was already reported).
  explicit NatsServer(const std::filesystem::path& dir) : dir_(dir / "nats") {
    const std::string binary = FindNatsServer();
    if (binary.empty()) {
      ADD_FAILURE() << "nats-server is not installed (apt-get install "
                       "nats-server; scripts/install-deps.sh does)";
      return;
    }
    std::filesystem::create_directories(dir_);
    port_ = FreePort();
    const std::string log = (dir_ / "server.log").string();
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::fopen(log.c_str(), "w");
      if (f != nullptr) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
      const std::string port = std::to_string(port_);
      const std::string store = (dir_ / "js").string();
      execl(binary.c_str(), binary.c_str(), "-a", "127.0.0.1", "-p",
            port.c_str(), "-js", "-sd", store.c_str(), nullptr);
      _exit(127);
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (PortAccepts(port_)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "nats-server did not listen on " << port_ << " in 10 s";
  }
  ~NatsServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      for (int i = 0; i < 100; ++i) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;

  bool ok() const { return pid_ > 0 && port_ != 0; }
  // The server's process (a test may SIGSTOP and SIGCONT it).
  pid_t pid() const { return pid_; }
  std::string url() const {
    return "nats://127.0.0.1:" + std::to_string(port_);
  }

 private:
  std::filesystem::path dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace freshd::testing

#endif  // FRESHD_TESTS_CLUSTER_NATS_SERVER_H_

// A real nats-server with JetStream for tests and benchmarks, without
// GoogleTest: started on a free loopback port with its store in a fresh
// directory (another port if that one was taken before the server bound
// it); Stop() ends it (a signal, then SIGKILL after 5 s) and Start()
// runs it again on the same port and store (a restart); the destructor
// stops it and removes the directory. A failure is kept as text in
// error() (nats_server.h reports it to GoogleTest). Not thread-safe: one
// thread drives it.

#ifndef FRESHD_TESTS_CLUSTER_NATS_PROCESS_H_
#define FRESHD_TESTS_CLUSTER_NATS_PROCESS_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "tests/cli/free_port.h"

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

class NatsProcess {
 public:
  // Starts the server in `dir`/nats; check ok() (else error() says why).
  explicit NatsProcess(const std::filesystem::path& dir)
      : dir_(dir / "nats"), binary_(FindNatsServer()) {
    if (binary_.empty()) {
      error_ =
          "nats-server is not installed (apt-get install nats-server; "
          "scripts/install-deps.sh does)";
      return;
    }
    std::filesystem::create_directories(dir_);
    // A port free when picked can be taken before the server binds it
    // (other tests run alongside): then the server exits, and another
    // port is tried.
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = FreePort();
      if (Start() || !exited_) break;
    }
  }
  ~NatsProcess() {
    Stop(SIGTERM);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  NatsProcess(const NatsProcess&) = delete;
  NatsProcess& operator=(const NatsProcess&) = delete;

  // Runs the server (again) on its port and store; waits until it says it
  // is ready and is the one accepting on the port (something else may
  // hold it: then the server exits), at most 60 s. False (and error()) on
  // failure.
  bool Start() {
    if (pid_ > 0 || binary_.empty()) return pid_ > 0;
    const std::string log = (dir_ / "server.log").string();
    std::error_code ec;
    const uintmax_t log_from = std::filesystem::exists(log, ec)
                                   ? std::filesystem::file_size(log, ec)
                                   : 0;
    exited_ = false;
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::fopen(log.c_str(), "a");
      if (f != nullptr) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
      const std::string port = std::to_string(port_);
      const std::string store = (dir_ / "js").string();
      execl(binary_.c_str(), binary_.c_str(), "-a", "127.0.0.1", "-p",
            port.c_str(), "-js", "-sd", store.c_str(), nullptr);
      _exit(127);
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        exited_ = true;
        error_ = "nats-server exited on start (port " + std::to_string(port_) +
                 " taken?; log: " + log + ")";
        return false;
      }
      if (LogSaysReady(log, log_from) && PortAccepts(port_)) {
        error_.clear();
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    error_ = "nats-server was not ready on " + std::to_string(port_) +
             " in 60 s (log: " + log + ")";
    return false;
  }

  // Ends the server with `sig` (SIGKILL: a crash), then SIGKILL after 5 s.
  void Stop(int sig = SIGTERM) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  bool ok() const { return pid_ > 0 && port_ != 0 && error_.empty(); }
  const std::string& error() const { return error_; }
  // The server's process (a test may SIGSTOP and SIGCONT it).
  pid_t pid() const { return pid_; }
  std::string url() const {
    return "nats://127.0.0.1:" + std::to_string(port_);
  }

 private:
  // Whether `log`, from byte `from` on, has the server's "Server is ready".
  static bool LogSaysReady(const std::string& log, uintmax_t from) {
    std::ifstream in(log, std::ios::binary);
    if (!in) return false;
    in.seekg(static_cast<std::streamoff>(from));
    const std::string text((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
    return text.find("Server is ready") != std::string::npos;
  }

  std::filesystem::path dir_;
  std::string binary_;
  std::string error_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  bool exited_ = false;  // the last Start's server exited on its own
};

}  // namespace freshd::testing

#endif  // FRESHD_TESTS_CLUSTER_NATS_PROCESS_H_

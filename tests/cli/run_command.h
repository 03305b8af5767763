// Runs the freshd binary (or any command) in a child process for CLI tests
// and returns its exit code, stdout and stderr. Not thread-safe: one call at
// a time per test.

#ifndef FRESHD_TESTS_CLI_RUN_COMMAND_H_
#define FRESHD_TESTS_CLI_RUN_COMMAND_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/free_port.h"

namespace freshd::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs FRESHD_BINARY with `args`; stdin is /dev/null.
inline CommandResult RunFreshd(const std::vector<std::string>& args) {
  char dir_template[] = "/tmp/freshd-cli-XXXXXX";
  std::string dir = mkdtemp(dir_template);
  std::string cmd = ShellQuote(FRESHD_BINARY);
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  cmd += " </dev/null >" + dir + "/out 2>" + dir + "/err";
  int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadWholeFile(dir + "/out");
  r.err = ReadWholeFile(dir + "/err");
  std::system(("rm -rf " + ShellQuote(dir)).c_str());
  return r;
}

// Writes `text` to a fresh temporary file and returns its path.
inline std::string WriteTempFile(const std::string& text,
                                 const std::string& suffix = ".toml") {
  char path_template[] = "/tmp/freshd-test-XXXXXX";
  int fd = mkstemp(path_template);
  std::string path = std::string(path_template) + suffix;
  close(fd);
  std::rename(path_template, path.c_str());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// GET `path` from 127.0.0.1:`port` (HTTP/1.0): the whole response, head
// and body; "" when nothing answered.
inline std::string HttpGetResponse(uint16_t port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, n);
    }
  }
  close(fd);
  return out;
}

// The status code (0: no reply) and the body of GET `target`.
inline std::pair<int, std::string> HttpGetStatus(uint16_t port,
                                                 const std::string& target) {
  std::string out = HttpGetResponse(port, target);
  size_t body = out.find("\r\n\r\n");
  if (out.size() < 12 || body == std::string::npos) return {0, ""};
  return {std::stoi(out.substr(9, 3)), out.substr(body + 4)};
}

}  // namespace freshd::testing

#endif  // FRESHD_TESTS_CLI_RUN_COMMAND_H_

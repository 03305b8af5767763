// freshd testweb: starts on an ephemeral loopback port, announces where on
// stdout, serves pages with plain sockets, stops with exit 0 on SIGTERM.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_command.h"

namespace freshd {
namespace {

// One HTTP/1.0 GET over a fresh connection; the whole response.
std::string Get(uint16_t port, const std::string& host,
                const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\n\r\n";
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return "";
  }
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, n);
  close(fd);
  return out;
}

TEST(TestwebCliTest, ServesTheWebAndStopsOnSigterm) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    execl(FRESHD_BINARY, FRESHD_BINARY, "testweb", "--web",
          FRESHD_SOURCE_DIR "/sim/webs/noisy.toml", "--listen", "127.0.0.1:0",
          "--day-seconds", "5", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  FILE* child_out = fdopen(out[0], "r");
  char line[1024] = {};
  ASSERT_NE(fgets(line, sizeof line, child_out), nullptr);
  auto hello = nlohmann::json::parse(line);
  uint16_t port = hello["port"].get<uint16_t>();
  EXPECT_EQ(hello["hosts"], 10);
  EXPECT_EQ(hello["pages"], 1000);

  std::string page = Get(port, "h3.test", "/p/305");
  EXPECT_NE(page.find("HTTP/1.1 200"), std::string::npos) << page;
  EXPECT_NE(page.find("<title>page 305</title>"), std::string::npos);
  EXPECT_NE(page.find("ETag: \"v"), std::string::npos);
  EXPECT_NE(Get(port, "h3.test", "/p/5").find("HTTP/1.1 404"),
            std::string::npos);
  EXPECT_NE(Get(port, "h3.test", "/robots.txt").find("Sitemap:"),
            std::string::npos);

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  fclose(child_out);
  EXPECT_EQ(Get(port, "h3.test", "/p/305"), "");  // nobody listens any more
}

TEST(TestwebCliTest, BadUsageExitsTwo) {
  auto r = testing::RunFreshd({"testweb", "--web", "/nonexistent.toml"});
  EXPECT_EQ(r.exit_code, 2);
  r = testing::RunFreshd({"testweb", "--web",
                          FRESHD_SOURCE_DIR "/sim/webs/noisy.toml", "--listen",
                          "127.0.0.1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ADDRESS:PORT"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace freshd

// freshd testweb --web WEB.toml --listen 127.0.0.1:PORT --day-seconds S:
// serves the simulated web over HTTP in compressed time (sim/test_web.h)
// until SIGINT or SIGTERM; --feeds adds a feed per host (/feed.xml). Prints one
// JSON line on stdout once listening (the actual port when PORT is 0, the time
// origin, the host names), so a harness can start it and read where it is. Exit
// 0 on a signal, 1 if it cannot listen, 2 on bad usage or a bad web file.

#include <csignal>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/clock.h"
#include "cli/commands.h"
#include "sim/test_web.h"
#include "sim/test_web_server.h"

namespace freshd::cli {
namespace {

struct TestwebArgs {
  std::string web;
  std::string listen = "127.0.0.1:8080";
  double day_seconds = 60;
  uint64_t seed = 1;
  int threads = 1;
  std::string access_log;
  bool feeds = false;
  uint32_t feed_entries = 20;
};

int RunTestweb(const TestwebArgs& a) {
  auto spec = sim::LoadWebSpec(a.web);
  if (!spec.ok()) {
    std::fprintf(stderr, "freshd testweb: %s\n",
                 spec.status().ToString().c_str());
    return 2;
  }
  size_t colon = a.listen.rfind(':');
  unsigned long port = 0;
  if (colon == std::string::npos ||
      (port = std::strtoul(a.listen.c_str() + colon + 1, nullptr, 10)) >
          65535 ||
      a.listen.find_first_not_of("0123456789", colon + 1) !=
          std::string::npos) {
    std::fprintf(stderr, "freshd testweb: --listen wants ADDRESS:PORT\n");
    return 2;
  }
  sim::TestWebOptions options;
  options.day_seconds = a.day_seconds;
  options.start_unix = UnixNow();
  options.feeds = a.feeds;
  options.feed_entries = a.feed_entries;
  auto web = std::make_shared<const sim::TestWeb>(
      sim::WebModel::Build(spec.value(), a.seed), options);

  // Block the stop signals before the server threads start, so they all
  // inherit the mask and sigwait below is the one place that sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto server = sim::TestWebServer::Start(web, a.listen.substr(0, colon),
                                          static_cast<uint16_t>(port),
                                          a.threads, a.access_log);
  if (!server.ok()) {
    std::fprintf(stderr, "freshd testweb: %s\n",
                 server.status().ToString().c_str());
    return server.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  nlohmann::json j;
  j["listen"] =
      a.listen.substr(0, colon) + ":" + std::to_string(server.value()->port());
  j["port"] = server.value()->port();
  j["hosts"] = web->model().spec.hosts;
  j["pages"] = web->model().pages.size();
  j["host_example"] = web->HostName(0);
  j["start_unix"] = options.start_unix;
  j["day_seconds"] = options.day_seconds;
  j["feeds"] = options.feeds;
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stop_signals, &signal);
  server.value()->Stop();
  std::fprintf(stderr,
               "freshd testweb: stopped by signal %d after %llu "
               "requests\n",
               signal,
               static_cast<unsigned long long>(server.value()->requests()));
  return 0;
}

}  // namespace

void AddTestwebCommand(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "testweb", "Serve a simulated web over HTTP in compressed time");
  auto a = std::make_shared<TestwebArgs>();
  sub->add_option("--web", a->web, "web model TOML (sim/README.md)")
      ->required();
  sub->add_option("--listen", a->listen, "ADDRESS:PORT (port 0: any free)");
  sub->add_option("--day-seconds", a->day_seconds,
                  "wall seconds per simulated day")
      ->check(CLI::Range(1e-3, 1e9));
  sub->add_option("--seed", a->seed, "web seed");
  sub->add_option("--threads", a->threads, "server threads")
      ->check(CLI::Range(1, 64));
  sub->add_option("--access-log", a->access_log,
                  "append every request to FILE: time, Host, target, "
                  "User-Agent (tab-separated)");
  sub->add_flag("--feeds", a->feeds,
                "serve an Atom feed of each host's latest changes at "
                "/feed.xml, linked from every page");
  sub->add_option("--feed-entries", a->feed_entries, "pages in a feed")
      ->check(CLI::Range(1, 1000));
  sub->callback([a, exit_code] { *exit_code = RunTestweb(*a); });
}

}  // namespace freshd::cli

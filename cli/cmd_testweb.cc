// freshd testweb --web WEB.toml --listen 127.0.0.1:PORT --day-seconds S:
// serves the simulated web over HTTP in compressed time (sim/test_web.h)
// until SIGINT or SIGTERM; --feeds adds a feed per host (/feed.xml). With
// --trace FILE instead of --web, serves a real change history under its own
// host names (sim/trace_web.h), its t0 (or --start) at the server's start.
// Prints one JSON line on stdout once listening (the actual port when PORT is
// 0, the time origin, the host names), so a harness can start it and read
// where it is. Exit 0 on a signal, 1 if it cannot listen, 2 on bad usage or a
// bad web or trace file.

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/clock.h"
#include "cli/commands.h"
#include "sim/test_web.h"
#include "sim/test_web_server.h"
#include "sim/trace.h"
#include "sim/trace_web.h"

namespace freshd::cli {
namespace {

struct TestwebArgs {
  std::string web;
  std::string trace;
  std::string start;
  uint32_t index_links = 1000;
  bool lastmod = false;
  std::string listen = "127.0.0.1:8080";
  double day_seconds = 60;
  uint64_t seed = 1;
  int threads = 1;
  std::string access_log;
  bool feeds = false;
  uint32_t feed_entries = 20;
};

// The web to serve and what the hello line says of it; exit code on error.
struct Served {
  std::shared_ptr<const sim::WebResponder> web;
  nlohmann::json hello;
  int exit_code = 0;
};

Served GeneratedWeb(const TestwebArgs& a, double start_unix) {
  auto spec = sim::LoadWebSpec(a.web);
  if (!spec.ok()) {
    std::fprintf(stderr, "freshd testweb: %s\n",
                 spec.status().ToString().c_str());
    return {nullptr, {}, 2};
  }
  sim::TestWebOptions options;
  options.day_seconds = a.day_seconds;
  options.start_unix = start_unix;
  options.feeds = a.feeds;
  options.feed_entries = a.feed_entries;
  auto web = std::make_shared<const sim::TestWeb>(
      sim::WebModel::Build(spec.value(), a.seed), options);
  Served out;
  out.hello["hosts"] = web->model().spec.hosts;
  out.hello["pages"] = web->model().pages.size();
  out.hello["host_example"] = web->HostName(0);
  out.hello["feeds"] = options.feeds;
  out.web = std::move(web);
  return out;
}

Served TraceWebOf(const TestwebArgs& a, double start_unix) {
  sim::TraceWebOptions options;
  options.day_seconds = a.day_seconds;
  options.start_unix = start_unix;
  options.index_links = a.index_links;
  options.lastmod = a.lastmod;
  if (!a.start.empty() && !sim::ParseTraceTime(a.start, &options.t0)) {
    std::fprintf(stderr, "freshd testweb: bad --start '%s'\n", a.start.c_str());
    return {nullptr, {}, 2};
  }
  Result<sim::Trace> trace = sim::LoadTrace(a.trace);
  if (!trace.ok()) {
    std::fprintf(stderr, "freshd testweb: %s\n",
                 trace.status().message().c_str());
    return {nullptr,
            {},
            trace.status().code() == Status::Code::kInvalidArgument ? 2 : 1};
  }
  auto web = std::make_shared<const sim::TraceWeb>(std::move(*trace), options);
  Served out;
  out.hello["hosts"] = web->host_names().size();
  out.hello["host_names"] = web->host_names();
  out.hello["pages"] = web->trace().pages.size();
  out.hello["changes"] = web->trace().changes;
  out.hello["t0"] = web->options().t0;
  double last = web->trace().last_time;
  out.hello["trace_days"] =
      std::isnan(last) ? 0.0 : std::max(0.0, last - web->options().t0) / 86400;
  out.web = std::move(web);
  return out;
}

int RunTestweb(const TestwebArgs& a) {
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
  const double start_unix = UnixNow();
  Served served =
      a.trace.empty() ? GeneratedWeb(a, start_unix) : TraceWebOf(a, start_unix);
  if (served.web == nullptr) return served.exit_code;

  // Block the stop signals before the server threads start, so they all
  // inherit the mask and sigwait below is the one place that sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto server = sim::TestWebServer::Start(served.web, a.listen.substr(0, colon),
                                          static_cast<uint16_t>(port),
                                          a.threads, a.access_log);
  if (!server.ok()) {
    std::fprintf(stderr, "freshd testweb: %s\n",
                 server.status().ToString().c_str());
    return server.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  nlohmann::json& j = served.hello;
  j["listen"] =
      a.listen.substr(0, colon) + ":" + std::to_string(server.value()->port());
  j["port"] = server.value()->port();
  j["start_unix"] = start_unix;
  j["day_seconds"] = a.day_seconds;
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
  CLI::Option* web =
      sub->add_option("--web", a->web, "web model TOML (sim/README.md)");
  CLI::Option* trace = sub->add_option(
      "--trace", a->trace,
      "serve a real change history instead (docs/traces.md): its own host "
      "names, reached through [fetch] resolve");
  web->excludes(trace);
  sub->add_option("--start", a->start,
                  "with --trace: the trace time served at the start, Unix "
                  "seconds or RFC 3339 (default: its earliest time)")
      ->needs(trace);
  sub->add_option("--index-links", a->index_links,
                  "with --trace: links per index page (/_testweb/index/N)")
      ->needs(trace)
      ->check(CLI::Range(1, 100000));
  sub->add_flag("--lastmod", a->lastmod,
                "with --trace: sitemaps give each page's true last change")
      ->needs(trace);
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
  sub->callback([a, exit_code, web, trace] {
    if (web->count() + trace->count() == 0) {
      std::fprintf(stderr, "freshd testweb: --web or --trace is required\n");
      *exit_code = 2;
      return;
    }
    *exit_code = RunTestweb(*a);
  });
}

}  // namespace freshd::cli

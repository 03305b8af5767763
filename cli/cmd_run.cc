// freshd run --config FILE [--seeds FILE]: the daemon in the foreground
// (daemon/crawl_loop.h behind the status endpoint). Logs to stderr at
// [log] level (spdlog; one line per fetch at debug); stops
// cleanly on SIGTERM/SIGINT (fetches in flight get 10 s, the store is
// synced); SIGHUP reloads the config file: [budget] rate, [log] level and
// the [[rule]]s apply at once (every page matched again; an origin rule's
// request headers and credentials, and the files they name, are read at
// start only, and a change to them is reported as needing a restart),
// other changes ([push] among them) are reported as needing a restart.
// With [push] listen set, the push listener (daemon/push_listener.h)
// starts once the store is recovered. Talks to systemd
// (daemon/sd_notify.h): EXTEND_TIMEOUT_USEC while the store is recovered
// (the status endpoint meanwhile says "recovering", status_service.h),
// READY=1 once serving, RELOADING=1 … READY=1 around a SIGHUP, STATUS=
// every 10 s, WATCHDOG=1 from the network thread, STOPPING=1. Exit 0 after a
// clean stop, 1 on a runtime failure (store locked, port busy), 2 on a bad
// config or seeds.
//
// freshd demo: the main job on an embedded default — an embedded synthetic
// web served on loopback in compressed time (sim/test_web.h), crawled by
// the real daemon loop for --seconds, printing its status every few
// seconds beside the true freshness known from the web's ground truth.

#include <time.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "base/clock.h"
#include "cli/commands.h"
#include "cli/demo_web.h"
#include "cli/preflight.h"
#include "conf/config.h"
#include "conf/rules.h"
#include "daemon/crawl_loop.h"
#include "daemon/http_server.h"
#include "daemon/operator_log.h"
#include "daemon/push_listener.h"
#include "daemon/sd_notify.h"
#include "daemon/seeds.h"
#include "daemon/status_service.h"
#include "spdlog/spdlog.h"

namespace freshd::cli {
namespace {

// How often systemd is asked to extend the start timeout during recovery.
constexpr double kExtendTimeoutS = 10;

// RELOADING=1 with the monotonic time, as Type=notify-reload wants.
std::string ReloadingState() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return "RELOADING=1\nMONOTONIC_USEC=" +
         std::to_string(static_cast<uint64_t>(ts.tv_sec) * 1000000 +
                        static_cast<uint64_t>(ts.tv_nsec) / 1000);
}

int RunDaemon(const std::string& config_path, const std::string& seeds_arg) {
  Result<Config> config = LoadConfigFile(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return 2;
  }
  // Logs go to stderr (the journal under systemd) at [log] level.
  daemon::InstallLogger(config.value().log.level, daemon::StderrIsJournal());
  std::string seeds_path =
      seeds_arg.empty() ? config.value().crawler.seeds : seeds_arg;
  // The seeds file is streamed twice (memory bounded whatever its size):
  // checked before the store is opened, added once the loop exists.
  size_t seed_count = 0;
  if (!seeds_path.empty()) {
    Status read =
        daemon::ForEachSeedInFile(seeds_path, [&](const daemon::Seed&) {
          ++seed_count;
          return Status::OK();
        });
    if (!read.ok()) {
      spdlog::error("{}", read.message());
      return 2;
    }
  }
  daemon::HttpServerOptions status_options;
  status_options.allowed_hosts = config.value().status.allowed_hosts;
  if (!config.value().status.token_file.empty()) {
    auto token = daemon::ReadTokenFile(config.value().status.token_file);
    if (!token.ok()) {
      spdlog::error("[status] token_file: {}", token.status().message());
      return 2;
    }
    status_options.token = std::move(token).value();
  }
  if (Status s = CreateWarcDir(config.value()); !s.ok()) {
    spdlog::error("{}: {}", config_path, s.message());
    return 2;
  }
  boost::asio::io_context io;
  // The status endpoint answers from the start: "recovering" with the
  // rebuild's progress until the loop exists (status_service.h).
  daemon::RecoveryProgress progress;
  progress.started_unix.store(UnixNow(), std::memory_order_relaxed);
  auto server = daemon::StatusService::StartRecovering(
      progress, config.value().status.listen, std::move(status_options));
  if (!server.ok()) {
    spdlog::error("status endpoint: {}", server.status().ToString());
    return 1;
  }
  // Recovery of a big store may outlast TimeoutStartSec=: systemd is told
  // to wait on while it runs.
  auto extender = std::make_unique<daemon::TimeoutExtender>(kExtendTimeoutS);
  auto loop = daemon::CrawlLoop::Create(io, config.value(), &progress);
  if (!loop.ok()) {
    spdlog::error("{}", loop.status().ToString());
    return 1;
  }
  daemon::CrawlLoop& crawl = *loop.value();
  const daemon::RecoveryReport& rec = crawl.recovery();
  for (const auto& m : rec.store_migrations) {
    spdlog::info("store {}: migrated, {}", config.value().store.path, m);
  }
  spdlog::info(
      "store {}: {} pages expected, {} pages restored ({} reset to never "
      "fetched), {} lost; {} corrupt records skipped",
      config.value().store.path, rec.expected_pages,
      rec.pages + rec.pages_reset, rec.pages_reset, rec.pages_lost(),
      rec.corrupt);
  for (const auto& c : rec.corrupt_records) {
    spdlog::warn("corrupt {}: {}", c.key, c.error);
  }
  for (const auto& d : rec.store_damage) spdlog::warn("store damage: {}", d);
  if (rec.pages_lost() > 0 || !rec.store_damage.empty()) {
    spdlog::warn(
        "store {} is damaged: stop freshd and run `freshd store repair "
        "--store {}`",
        config.value().store.path, config.value().store.path);
  }
  if (!seeds_path.empty()) {
    // Still "recovering" (the loop does not serve yet), phase "seeds".
    progress.seeds_total.store(seed_count, std::memory_order_relaxed);
    progress.adding_seeds.store(true, std::memory_order_relaxed);
    Status read =
        daemon::ForEachSeedInFile(seeds_path, [&](const daemon::Seed& seed) {
          progress.seeds_read.fetch_add(1, std::memory_order_relaxed);
          Status s = crawl.AddSeed(seed.url, seed.weight);
          if (!s.ok()) {
            spdlog::warn("{}:{}: {}", seeds_path, seed.line, s.message());
          }
          return Status::OK();
        });
    if (!read.ok()) spdlog::error("seeds not all added: {}", read.message());
    spdlog::info("{} seeds from {}", seed_count, seeds_path);
  }
  extender.reset();  // (a 10M-line seeds file takes a while too)
  // The status endpoint answers from its own thread (status_service.h).
  server.value()->Attach(crawl);
  // The push listener ([push] listen): sites' IndexNow pings and WebSub
  // callbacks, on its own thread, handed to the loop (push_listener.h).
  // The subscriptions were restored with the loop, before it serves.
  std::unique_ptr<daemon::PushListener> push;
  if (crawl.indexnow() != nullptr) {
    auto listening = daemon::PushListener::Start(
        io, crawl.indexnow(),
        daemon::PushListener::OptionsFromConfig(config.value().push),
        crawl.websub());
    if (!listening.ok()) {
      spdlog::error("push listener: {}", listening.status().ToString());
      return 1;
    }
    push = std::move(listening).value();
    spdlog::info("push listener (IndexNow, WebSub) on {} port {}{}",
                 config.value().push.listen, push->port(),
                 config.value().push.public_url.empty()
                     ? ""
                     : ", reached as " + config.value().push.public_url);
  }
  const std::string& listen = config.value().status.listen;
  spdlog::info(
      "{} pages known, policy {}, budget {} pages/s, status on "
      "http://{}:{}/status",
      crawl.urls().size(), config.value().sched.policy,
      config.value().budget.rate, listen.substr(0, listen.rfind(':')),
      server.value()->port());

  int exit_code = 0;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](boost::system::error_code ec, int signal) {
      if (ec) return;
      if (signal == SIGHUP) {
        daemon::SdNotify(ReloadingState());
        Result<Config> fresh = LoadConfigFile(config_path);
        if (!fresh.ok()) {
          spdlog::error("SIGHUP: config not reloaded: {}",
                        fresh.status().message());
        } else {
          crawl.SetRate(fresh.value().budget.rate);
          Config applied = config.value();
          applied.budget.rate = fresh.value().budget.rate;
          applied.log.level = fresh.value().log.level;
          spdlog::set_level(spdlog::level::from_str(fresh.value().log.level));
          if (Status r = crawl.SetRules(fresh.value().rules); r.ok()) {
            if (!SameRequestKeys(applied.rules, fresh.value().rules)) {
              spdlog::warn(
                  "SIGHUP: [[rule]] request headers and credentials are read "
                  "at start only: restart to apply their change");
            }
            applied.rules = fresh.value().rules;
          } else {
            spdlog::error("SIGHUP: rules not reloaded: {}", r.message());
          }
          spdlog::info(
              "SIGHUP: budget now {} pages/s, log level {}, {} rules{}",
              fresh.value().budget.rate, fresh.value().log.level,
              applied.rules.size(),
              applied == fresh.value() ? "" : "; other changes need a restart");
        }
        daemon::SdNotify("READY=1");
        wait_signal();
        return;
      }
      spdlog::info("signal {}: stopping", signal);
      daemon::SdNotify("STOPPING=1");
      crawl.Stop(10, [&](Status s) {
        if (!s.ok()) {
          spdlog::error("stop: {}", s.ToString());
          exit_code = 1;
        }
        push.reset();
        server.value().reset();
        io.stop();
      });
    });
  };
  wait_signal();
  crawl.Start();
  daemon::SdNotify("READY=1");
  io.run();
  push.reset();            // before the loop's receiver
  server.value().reset();  // before the loop it routes to
  return exit_code;
}

}  // namespace

void AddRunCommands(CLI::App& app, int* exit_code) {
  CLI::App* run = app.add_subcommand(
      "run",
      "Run the crawler daemon in the foreground (stops on SIGTERM/SIGINT, "
      "reloads config on SIGHUP)");
  struct Options {
    std::string config_path;
    std::string seeds_path;
  };
  // Owned by the callback, which the App keeps as long as it parses.
  auto opts = std::make_shared<Options>();
  run->add_option("--config", opts->config_path, "TOML config file")
      ->required();
  run->add_option(
      "--seeds", opts->seeds_path,
      "seed URLs, one per line, optional whitespace-separated weight");
  run->callback([exit_code, opts] {
    *exit_code = RunDaemon(opts->config_path, opts->seeds_path);
  });

  CLI::App* demo = app.add_subcommand(
      "demo",
      "Crawl an embedded synthetic web on loopback with the real daemon loop "
      "and report its freshness against the ground truth");
  auto demo_opts = std::make_shared<cli::DemoOptions>();
  demo->add_option("--seconds", demo_opts->seconds, "how long to crawl")
      ->check(CLI::Range(1.0, 86400.0));
  demo->add_option("--rate", demo_opts->rate, "budget, pages per second")
      ->check(CLI::Range(0.1, 1000.0));
  demo->add_option("--policy", demo_opts->policy, "[sched] policy");
  demo->add_flag("--feeds", demo_opts->feeds,
                 "each host also serves an Atom feed of its latest changes, "
                 "which the daemon polls ([site_feeds])");
  demo->callback(
      [exit_code, demo_opts] { *exit_code = cli::RunDemo(*demo_opts); });
}

}  // namespace freshd::cli

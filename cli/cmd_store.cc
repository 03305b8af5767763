// freshd store check --store DIR / freshd store repair --store DIR: offline
// verification and repair of a store (store/store_check.h), with the freshd
// daemon stopped (LevelDB's lock refuses a store in use). Both print a
// report on stdout, one "key: value" or "problem: ..." line each.
// Exit codes:
//   check:  0 healthy; 3 damage found (each kind on a "problem:" line);
//   repair: 0 the store is healthy afterwards (what was lost is reported);
//           3 damage remains after the repair;
//   both:   1 cannot run (store locked by a running freshd, I/O error);
//           2 bad usage (no such directory, not a freshd store).
//
// freshd store trace --store DIR [--output FILE]: the change trace the
// store's change feed holds (store/trace_export.h; docs/traces.md), CSV on
// stdout or FILE, censored and labelled so (column observed=fetch); a
// summary on stderr. Exit 0, 1 cannot run, 2 bad usage.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "store/page_store.h"
#include "store/store_check.h"
#include "store/trace_export.h"

namespace freshd::cli {
namespace {

constexpr int kDamageFound = 3;

int ExitFor(const Status& s) {
  std::fprintf(stderr, "freshd store: %s\n", s.ToString().c_str());
  switch (s.code()) {
    case Status::Code::kNotFound:
    case Status::Code::kInvalidArgument:
      return 2;
    default:
      return 1;
  }
}

void PrintCheck(const char* prefix, const store::StoreCheckReport& r) {
  std::printf("%sopened: %s\n", prefix, r.opened ? "yes" : "no");
  if (r.expected_known) {
    std::printf("%spages expected: %llu\n", prefix,
                static_cast<unsigned long long>(r.pages_expected));
  }
  std::printf("%spages readable: %llu\n", prefix,
              static_cast<unsigned long long>(r.pages));
  std::printf("%spages lost: %llu\n", prefix,
              static_cast<unsigned long long>(r.pages_lost()));
  std::printf("%shosts readable: %llu\n", prefix,
              static_cast<unsigned long long>(r.hosts));
  if (r.opened) {
    std::printf("%sschema version: %llu%s\n", prefix,
                static_cast<unsigned long long>(r.schema_version),
                r.schema_version < store::kSchemaVersion
                    ? " (older: the daemon's next start migrates it)"
                    : "");
  }
  std::printf("%scorrupt records: %llu\n", prefix,
              static_cast<unsigned long long>(r.corrupt_records));
  for (const std::string& p : r.problems) {
    std::printf("%sproblem: %s\n", prefix, p.c_str());
  }
  for (const std::string& l : r.leveldb_log) {
    std::printf("%sleveldb: %s\n", prefix, l.c_str());
  }
  std::printf("%sverdict: %s\n", prefix, r.healthy() ? "healthy" : "damaged");
}

int RunCheck(const std::string& dir) {
  Result<store::StoreCheckReport> r = store::CheckStore(dir);
  if (!r.ok()) return ExitFor(r.status());
  PrintCheck("", r.value());
  if (!r.value().healthy()) {
    std::fprintf(stderr,
                 "freshd store: %s is damaged; `freshd store repair --store "
                 "%s` salvages what LevelDB can read\n",
                 dir.c_str(), dir.c_str());
    return kDamageFound;
  }
  return 0;
}

int RunRepair(const std::string& dir) {
  Result<store::StoreRepairReport> r = store::RepairStore(dir);
  if (!r.ok()) return ExitFor(r.status());
  PrintCheck("before ", r.value().before);
  for (const std::string& l : r.value().repair_log) {
    std::printf("repair: %s\n", l.c_str());
  }
  PrintCheck("after ", r.value().after);
  std::printf(
      "records kept from damaged blocks: %llu\n",
      static_cast<unsigned long long>(r.value().records_from_damaged_blocks));
  std::printf("pages lost by the damage: %llu\n",
              static_cast<unsigned long long>(r.value().pages_lost));
  std::printf("damaged files, if any, were moved to %s/lost/\n", dir.c_str());
  return r.value().after.healthy() ? 0 : kDamageFound;
}

int RunTrace(const std::string& dir, const std::string& output) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec)) {
    std::fprintf(stderr, "freshd store: %s is not a store (no CURRENT)\n",
                 dir.c_str());
    return 2;
  }
  StoreConfig config;
  config.path = dir;
  config.block_cache_bytes = 8 << 20;
  Result<std::unique_ptr<store::PageStore>> opened =
      store::PageStore::Open(config);
  if (!opened.ok()) return ExitFor(opened.status());
  std::ofstream file;
  if (!output.empty()) {
    file.open(output, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::fprintf(stderr, "freshd store: cannot write %s\n", output.c_str());
      return 1;
    }
  }
  std::ostream& out = output.empty() ? std::cout : file;
  store::TraceExportStats stats;
  Status s = store::ExportTrace(*opened.value(), out, &stats);
  if (!s.ok()) return ExitFor(s);
  std::fprintf(stderr,
               "freshd store: %llu rows (%llu pages seen never changing) from "
               "%llu feed events, seq %llu..%llu, %.0f..%.0f (Unix s); times "
               "are when a fetch saw the event (censored)\n",
               static_cast<unsigned long long>(stats.rows),
               static_cast<unsigned long long>(stats.static_pages),
               static_cast<unsigned long long>(stats.feed_events),
               static_cast<unsigned long long>(stats.first_seq),
               static_cast<unsigned long long>(stats.last_seq),
               stats.first_time, stats.last_time);
  return 0;
}

}  // namespace

void AddStoreCommands(CLI::App& app, int* exit_code) {
  CLI::App* store = app.add_subcommand(
      "store",
      "Check, repair or export the change trace of a stopped daemon's store "
      "(LevelDB)");
  store->require_subcommand(1, 1);
  {
    auto trace_dir = std::make_shared<std::string>();
    auto output = std::make_shared<std::string>();
    CLI::App* cmd = store->add_subcommand(
        "trace",
        "Export the change trace of the store's change feed (CSV url,time,"
        "event,observed; censored: times are when a fetch saw the change); "
        "exit 0, 1 cannot run, 2 bad usage");
    cmd->add_option("--store", *trace_dir, "store directory ([store] path)")
        ->required();
    cmd->add_option("--output,-o", *output, "output file (default stdout)");
    cmd->callback([exit_code, trace_dir, output] {
      *exit_code = RunTrace(*trace_dir, *output);
    });
  }
  auto dir = std::make_shared<std::string>();
  struct Sub {
    const char* name;
    const char* help;
    int (*run)(const std::string&);
  };
  for (const Sub& sub :
       {Sub{"check",
            "Read every record, verifying checksums; exit 0 healthy, 3 "
            "damaged (each kind of damage and the pages it cost listed), 1 "
            "cannot run, 2 bad usage",
            RunCheck},
        Sub{"repair",
            "Set damaged tables aside, LevelDB RepairDB, then a report of the "
            "pages before and after and what was lost; exit 0 healthy "
            "afterwards, 3 damage remains, 1 cannot run, 2 bad usage",
            RunRepair}}) {
    CLI::App* cmd = store->add_subcommand(sub.name, sub.help);
    cmd->add_option("--store", *dir, "store directory ([store] path)")
        ->required();
    cmd->callback([exit_code, dir, run = sub.run] { *exit_code = run(*dir); });
  }
}

}  // namespace freshd::cli

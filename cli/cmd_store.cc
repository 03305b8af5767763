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

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "store/store_check.h"

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
  std::printf("%ssignals readable: %llu\n", prefix,
              static_cast<unsigned long long>(r.signals));
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

}  // namespace

void AddStoreCommands(CLI::App& app, int* exit_code) {
  CLI::App* store = app.add_subcommand(
      "store", "Check or repair a stopped daemon's store (LevelDB)");
  store->require_subcommand(1, 1);
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

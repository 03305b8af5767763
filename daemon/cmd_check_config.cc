// freshd check-config FILE [--print]: validates a config file. Prints "ok"
// (or, with --print, the effective config with every default filled in) and
// exits 0; otherwise prints "file:line: [section] key: what" on stderr and
// exits 2.

#include <cstdio>
#include <string>

#include "conf/config.h"
#include "daemon/commands.h"

namespace freshd::cli {

void AddCheckConfigCommand(CLI::App& app, int* exit_code) {
  CLI::App* sub =
      app.add_subcommand("check-config",
                         "Validate a config file; exit 0 and \"ok\", or exit 2 "
                         "with the file, line and key at fault");
  auto* path = new std::string;  // lives as long as the process
  auto* print = new bool(false);
  sub->add_option("FILE", *path, "TOML config file")->required();
  sub->add_flag("--print", *print,
                "print the effective config (defaults filled in)");
  sub->callback([exit_code, path, print] {
    Result<Config> config = LoadConfigFile(*path);
    if (!config.ok()) {
      std::fprintf(stderr, "%s\n", config.status().message().c_str());
      *exit_code = 2;
      return;
    }
    if (*print) {
      std::fputs(ConfigToToml(*config).c_str(), stdout);
    } else {
      std::puts("ok");
    }
    *exit_code = 0;
  });
}

}  // namespace freshd::cli

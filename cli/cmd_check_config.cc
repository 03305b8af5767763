// freshd check-config FILE [--print]: validates a config file. Prints "ok"
// (or, with --print, the effective config with every default filled in) and
// exits 0; otherwise prints "file:line: [section] key: what" on stderr and
// exits 2. Beyond the file's content it checks what `run` would trip on
// (cli/preflight.h): the seeds file is readable and parses, [store]
// warc_dir is or can be made a writable directory, the credentials files
// (proxy and origin rules) are private and parse, [status] listen and
// [push] listen can be bound; each failure is "file: [section] key: what",
// exit 2.

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/preflight.h"
#include "conf/config.h"

namespace freshd::cli {

void AddCheckConfigCommand(CLI::App& app, int* exit_code) {
  CLI::App* sub =
      app.add_subcommand("check-config",
                         "Validate a config file; exit 0 and \"ok\", or exit 2 "
                         "with the file, line and key at fault");
  struct Options {
    std::string path;
    bool print = false;
  };
  // Owned by the callback, which the App keeps as long as it parses.
  auto opts = std::make_shared<Options>();
  sub->add_option("FILE", opts->path, "TOML config file")->required();
  sub->add_flag("--print", opts->print,
                "print the effective config (defaults filled in)");
  sub->callback([exit_code, opts] {
    Result<Config> config = LoadConfigFile(opts->path);
    if (!config.ok()) {
      std::fprintf(stderr, "%s\n", config.status().message().c_str());
      *exit_code = 2;
      return;
    }
    if (Status s = Preflight(*config); !s.ok()) {
      std::fprintf(stderr, "%s: %s\n", opts->path.c_str(), s.message().c_str());
      *exit_code = 2;
      return;
    }
    if (opts->print) {
      std::fputs(ConfigToToml(*config).c_str(), stdout);
    } else {
      std::puts("ok");
    }
    *exit_code = 0;
  });
}

}  // namespace freshd::cli

// Placeholder for the fetch subcommand(s), filled in by issue #5.

#include <cstdio>

#include "daemon/commands.h"

namespace freshd::cli {

void AddFetchCommand(CLI::App& app, int* exit_code) {
  for (const char* name : {"fetch"}) {
    CLI::App* sub = app.add_subcommand(name, "(not built yet: issue #5)");
    sub->allow_extras();
    sub->callback([exit_code, name] {
      std::fprintf(stderr, "freshd %s: not built yet (issue #5)\n", name);
      *exit_code = 2;
    });
  }
}

}  // namespace freshd::cli

// Placeholder for the testweb subcommand(s), filled in by issue #4.

#include <cstdio>

#include "daemon/commands.h"

namespace freshd::cli {

void AddTestwebCommand(CLI::App& app, int* exit_code) {
  for (const char* name : {"testweb"}) {
    CLI::App* sub = app.add_subcommand(name, "(not built yet: issue #4)");
    sub->allow_extras();
    sub->callback([exit_code, name] {
      std::fprintf(stderr, "freshd %s: not built yet (issue #4)\n", name);
      *exit_code = 2;
    });
  }
}

}  // namespace freshd::cli

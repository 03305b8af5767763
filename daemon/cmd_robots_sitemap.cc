// Placeholder for the robots/sitemap subcommand(s), filled in by issue #3.

#include <cstdio>

#include "daemon/commands.h"

namespace freshd::cli {

void AddRobotsSitemapCommands(CLI::App& app, int* exit_code) {
  for (const char* name : {"robots", "sitemap"}) {
    CLI::App* sub = app.add_subcommand(name, "(not built yet: issue #3)");
    sub->allow_extras();
    sub->callback([exit_code, name] {
      std::fprintf(stderr, "freshd %s: not built yet (issue #3)\n", name);
      *exit_code = 2;
    });
  }
}

}  // namespace freshd::cli

// BuildApp: the freshd command line, shared by main() and the man page
// generator.

#include "cli/commands.h"

namespace freshd::cli {

void BuildApp(CLI::App& app, int* exit_code) {
  app.description(
      "freshd — a crawler that keeps a web copy fresh on a fixed budget");
  app.name("freshd");
  app.set_version_flag("--version", FRESHD_VERSION);
  app.require_subcommand(1, 1);
  app.fallthrough(false);
  AddRunCommands(app, exit_code);
  AddCheckConfigCommand(app, exit_code);
  AddRobotsSitemapCommands(app, exit_code);
  AddFingerprintCommands(app, exit_code);
  AddFetchCommand(app, exit_code);
  AddSimCommand(app, exit_code);
  AddPlanCommand(app, exit_code);
  AddAllocateCommand(app, exit_code);
  AddTestwebCommand(app, exit_code);
  AddStoreCommands(app, exit_code);
  AddChangesCommand(app, exit_code);
  AddCdxCommand(app, exit_code);
  AddClusterCommand(app, exit_code);
  AddCtlCommand(app, exit_code);
}

}  // namespace freshd::cli

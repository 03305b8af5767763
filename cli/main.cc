// freshd: one binary, one subcommand per job (see ../shared/DESIGN.md and
// README.md). Exit codes: 0 ok, 1 runtime failure, 2 bad usage or input.

#include <cstdio>
#include <exception>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "freshd — a crawler that keeps a web copy fresh on a fixed budget"};
  app.set_version_flag("--version", FRESHD_VERSION);
  app.require_subcommand(1, 1);
  app.fallthrough(false);

  int exit_code = 0;
  freshd::cli::AddRunCommands(app, &exit_code);
  freshd::cli::AddCheckConfigCommand(app, &exit_code);
  freshd::cli::AddRobotsSitemapCommands(app, &exit_code);
  freshd::cli::AddFingerprintCommands(app, &exit_code);
  freshd::cli::AddFetchCommand(app, &exit_code);
  freshd::cli::AddSimCommand(app, &exit_code);
  freshd::cli::AddAllocateCommand(app, &exit_code);
  freshd::cli::AddTestwebCommand(app, &exit_code);
  freshd::cli::AddStoreCommands(app, &exit_code);
  freshd::cli::AddChangesCommand(app, &exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage hint on stderr
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "freshd: internal error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}

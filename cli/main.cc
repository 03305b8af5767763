// freshd: one binary, one subcommand per job (see docs/DESIGN.md and
// README.md). Exit codes: 0 ok, 1 runtime failure, 2 bad usage or input.

#include <cstdio>
#include <exception>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app;
  int exit_code = 0;
  freshd::cli::BuildApp(app, &exit_code);

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

// The freshd subcommands. Each Add*Command registers one or more subcommands
// (with their --help) on `app`; when the subcommand runs, its callback stores
// the process exit code in *exit_code: 0 success, 1 runtime failure, 2 bad
// usage or bad input. Commands print results on stdout and diagnostics on
// stderr. Each group lives in its own cmd_*.cc file.

#ifndef FRESHD_CLI_COMMANDS_H_
#define FRESHD_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace freshd::cli {

void AddRunCommands(CLI::App& app, int* exit_code);         // run, demo
void AddCheckConfigCommand(CLI::App& app, int* exit_code);  // check-config
void AddRobotsSitemapCommands(CLI::App& app,
                              int* exit_code);  // robots, sitemap
void AddFingerprintCommands(CLI::App& app,
                            int* exit_code);             // fingerprint, diff
void AddFetchCommand(CLI::App& app, int* exit_code);     // fetch
void AddSimCommand(CLI::App& app, int* exit_code);       // sim
void AddPlanCommand(CLI::App& app, int* exit_code);      // plan
void AddAllocateCommand(CLI::App& app, int* exit_code);  // allocate
void AddTestwebCommand(CLI::App& app, int* exit_code);   // testweb
void AddStoreCommands(CLI::App& app, int* exit_code);    // store check|repair
void AddChangesCommand(CLI::App& app, int* exit_code);   // changes
void AddCdxCommand(CLI::App& app, int* exit_code);       // cdx
void AddClusterCommand(CLI::App& app, int* exit_code);   // cluster status
void AddCtlCommand(CLI::App& app, int* exit_code);       // ctl pause|resume|...

// The whole command line: the description, --version and every subcommand
// above, in --help order. main() parses with it; the man page generator
// (man/mangen.cc) walks it, so freshd(8) cannot drift from --help.
void BuildApp(CLI::App& app, int* exit_code);

}  // namespace freshd::cli

#endif  // FRESHD_CLI_COMMANDS_H_

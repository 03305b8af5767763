// The command line's client of a running daemon's status endpoint
// (`freshd changes`, `freshd ctl`): where the endpoint listens and its
// bearer token (--status/--token-file, else the config's [status] listen
// and token_file, else the default listen), and one plain-HTTP request to
// it through libcurl. A wildcard listen address (0.0.0.0, [::]) is reached
// on loopback. Blocking; any thread.

#ifndef FRESHD_CLI_STATUS_CLIENT_H_
#define FRESHD_CLI_STATUS_CLIENT_H_

#include <string>

#include "CLI/CLI.hpp"
#include "base/status.h"

namespace freshd::cli {

struct StatusEndpoint {
  std::string config;      // --config: freshd.toml to read [status] from
  std::string status;      // --status ADDRESS:PORT
  std::string token_file;  // --token-file
};

// --config, --status and --token-file on `cmd`.
void AddStatusEndpointOptions(CLI::App* cmd, StatusEndpoint* endpoint);

// Fills endpoint->status (loopback for a wildcard) and *token from the
// flags, the config or the defaults. InvalidArgument for a config or token
// file that cannot be read, and, with `loopback_only`, for an address that
// is not loopback (or localhost).
[[nodiscard]] Status ResolveStatusEndpoint(StatusEndpoint* endpoint,
                                           bool loopback_only,
                                           std::string* token);

// One request to `url`: a GET, or a POST of `post_json` (Content-Type
// application/json) when it is not null. Returns the HTTP status with the
// reply in *body, or 0 with libcurl's error in *error (no connection, a
// timeout after `timeout_s`).
int StatusRequest(const std::string& url, const std::string& token,
                  const std::string* post_json, double timeout_s,
                  std::string* body, std::string* error);

}  // namespace freshd::cli

#endif  // FRESHD_CLI_STATUS_CLIENT_H_

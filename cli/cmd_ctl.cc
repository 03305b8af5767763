// freshd ctl pause|resume|block|unblock HOST | --pattern RE, freshd ctl
// list: the operators' runtime controls of a running daemon (POST and GET
// /control on its status endpoint, daemon/operator_controls.h). The address
// and token come from --status/--token-file, else the config's [status]
// listen and token_file, else the default listen; a wildcard address is
// reached on loopback, and any other non-loopback address is refused
// (controls are the local operator's). Prints the daemon's JSON reply (the
// controls in force) on stdout. Exit codes: 0 done; 1 the daemon could not
// be reached or failed (5xx); 2 bad usage, a non-loopback address, or a
// control the daemon refused (400 bad pattern or action, 404 no such
// control, 409 over the bounds; its error on stderr).

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/status_client.h"
#include "nlohmann/json.hpp"

namespace freshd::cli {
namespace {

struct CtlOptions {
  StatusEndpoint endpoint;
  std::string target;   // HOST
  std::string pattern;  // --pattern RE
};

int RunCtl(CtlOptions o, const std::string& action) {
  std::string token;
  if (Status s =
          ResolveStatusEndpoint(&o.endpoint, /*loopback_only=*/true, &token);
      !s.ok()) {
    std::fprintf(stderr, "freshd ctl: %s\n", s.message().c_str());
    return 2;
  }
  std::string post;
  if (action != "list") {
    if (o.target.empty() == o.pattern.empty()) {
      std::fprintf(stderr,
                   "freshd ctl %s: give a HOST or --pattern RE (not both)\n",
                   action.c_str());
      return 2;
    }
    nlohmann::json j = {{"action", action}};
    if (o.pattern.empty()) {
      j["host"] = o.target;
    } else {
      j["pattern"] = o.pattern;
    }
    post = j.dump();
  }
  std::string body, error;
  const int status =
      StatusRequest("http://" + o.endpoint.status + "/control", token,
                    action == "list" ? nullptr : &post, 30, &body, &error);
  if (status == 200) {
    std::fwrite(body.data(), 1, body.size(), stdout);
    if (body.empty() || body.back() != '\n') std::fputc('\n', stdout);
    return 0;
  }
  std::fprintf(stderr, "freshd ctl: %s\n",
               status == 0
                   ? error.c_str()
                   : ("HTTP " + std::to_string(status) + ": " + body).c_str());
  return status >= 400 && status < 500 ? 2 : 1;
}

}  // namespace

void AddCtlCommand(CLI::App& app, int* exit_code) {
  CLI::App* ctl = app.add_subcommand(
      "ctl",
      "Operator controls of the running daemon (POST /control): pause, "
      "resume, block or unblock a host or URL pattern; list them");
  ctl->require_subcommand(1);
  const struct {
    const char* name;
    const char* help;
  } actions[] = {
      {"pause", "No fetches of the host's (or pattern's) pages until resume"},
      {"resume", "Lift a pause"},
      {"block",
       "No fetches, and new matching URLs are not added, until unblock"},
      {"unblock", "Lift a block"},
  };
  for (const auto& a : actions) {
    auto o = std::make_shared<CtlOptions>();
    CLI::App* cmd = ctl->add_subcommand(a.name, a.help);
    cmd->add_option("HOST", o->target, "host name (any port) or host:port");
    cmd->add_option("--pattern", o->pattern,
                    "an RE2 regex searched in the normalized URL instead");
    AddStatusEndpointOptions(cmd, &o->endpoint);
    const std::string action = a.name;
    cmd->callback([o, action, exit_code] { *exit_code = RunCtl(*o, action); });
  }
  auto o = std::make_shared<CtlOptions>();
  CLI::App* list = ctl->add_subcommand("list", "The controls in force (JSON)");
  AddStatusEndpointOptions(list, &o->endpoint);
  list->callback([o, exit_code] { *exit_code = RunCtl(*o, "list"); });
}

}  // namespace freshd::cli

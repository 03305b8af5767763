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

#include <curl/curl.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "conf/config.h"
#include "daemon/http_server.h"
#include "nlohmann/json.hpp"

namespace freshd::cli {
namespace {

struct CtlOptions {
  std::string config;
  std::string status;  // ADDRESS:PORT
  std::string token_file;
  std::string target;   // HOST
  std::string pattern;  // --pattern RE
};

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// One request (POST when `post_body` is set); the HTTP status (0: no
// connection) and the body.
int Request(const std::string& url, const std::string& token,
            const std::string* post_body, std::string* body,
            std::string* error) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) {
    *error = "curl_easy_init failed";
    return 0;
  }
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 30000L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http");
  curl_slist* headers = nullptr;
  if (!token.empty()) {
    headers =
        curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
  }
  if (post_body != nullptr) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post_body->c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE,
                     static_cast<long>(post_body->size()));  // NOLINT
  }
  if (headers != nullptr) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;  // NOLINT(runtime/int): curl's type
  if (rc == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  } else {
    *error = curl_easy_strerror(rc);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return static_cast<int>(status);
}

// The endpoint's ADDRESS:PORT and token from the options or the config;
// false (after a message) on a bad config, token file or address.
bool ResolveEndpoint(CtlOptions* o, std::string* token) {
  if (o->status.empty()) {
    if (o->config.empty()) {
      o->status = Config{}.status.listen;
    } else {
      auto config = LoadConfigFile(o->config);
      if (!config.ok()) {
        std::fprintf(stderr, "freshd ctl: %s\n",
                     config.status().ToString().c_str());
        return false;
      }
      o->status = config.value().status.listen;
      if (o->token_file.empty()) {
        o->token_file = config.value().status.token_file;
      }
    }
  }
  if (!o->token_file.empty()) {
    auto t = daemon::ReadTokenFile(o->token_file);
    if (!t.ok()) {
      std::fprintf(stderr, "freshd ctl: token file: %s\n",
                   t.status().ToString().c_str());
      return false;
    }
    *token = *t;
  }
  // A wildcard listen address is reached on loopback.
  if (o->status.rfind("0.0.0.0:", 0) == 0) {
    o->status = "127.0.0.1" + o->status.substr(7);
  }
  if (o->status.rfind("[::]:", 0) == 0)
    o->status = "[::1]" + o->status.substr(4);
  const bool localhost = o->status.rfind("localhost:", 0) == 0;
  if (!localhost && !daemon::IsLoopbackListen(o->status)) {
    std::fprintf(stderr,
                 "freshd ctl: %s is not a loopback address: controls are "
                 "sent only to a daemon on this machine\n",
                 o->status.c_str());
    return false;
  }
  return true;
}

int RunCtl(CtlOptions o, const std::string& action) {
  std::string token;
  if (!ResolveEndpoint(&o, &token)) return 2;
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
  const int status = Request("http://" + o.status + "/control", token,
                             action == "list" ? nullptr : &post, &body, &error);
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

void AddEndpointOptions(CLI::App* cmd, CtlOptions* o) {
  cmd->add_option("--config", o->config,
                  "freshd.toml whose [status] listen and token_file to use");
  cmd->add_option("--status", o->status,
                  "status endpoint ADDRESS:PORT on loopback (default: the "
                  "config's, or " +
                      Config{}.status.listen + ")");
  cmd->add_option("--token-file", o->token_file, "bearer token file");
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
    AddEndpointOptions(cmd, o.get());
    const std::string action = a.name;
    cmd->callback([o, action, exit_code] { *exit_code = RunCtl(*o, action); });
  }
  auto o = std::make_shared<CtlOptions>();
  CLI::App* list = ctl->add_subcommand("list", "The controls in force (JSON)");
  AddEndpointOptions(list, o.get());
  list->callback([o, exit_code] { *exit_code = RunCtl(*o, "list"); });
}

}  // namespace freshd::cli

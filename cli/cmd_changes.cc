// freshd changes [--since C] [--follow]: tails the running daemon's change
// feed (GET /changes on its status endpoint, daemon/change_feed.h). Prints
// each reply as the endpoint sends it, JSON Lines on stdout: the events
// (each with its "seq", the cursor), then the cursor line
// {"next_cursor": N, "oldest": O, "newest": W, "gap": G, "more": M}; stdout
// is flushed after every reply. A consumer resumes with --since set to the
// last seq it processed. Without --follow it reads until it has caught up
// and exits 0; with --follow it long-polls forever, and waits for a daemon
// that is down or restarting (retrying every 0.5 s, a note on stderr).
// A "gap" (events dropped by retention before they were read) is reported
// on stderr. Exit codes: 0 done, 1 the endpoint failed (not --follow), 2 bad
// usage or a cursor the daemon does not know (409).

#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "conf/config.h"
#include "daemon/change_feed.h"
#include "daemon/http_server.h"
#include "nlohmann/json.hpp"

namespace freshd::cli {
namespace {

struct Options {
  std::string config;
  std::string status;  // ADDRESS:PORT
  std::string token_file;
  uint64_t since = 0;
  size_t limit = daemon::kFeedDefaultLimit;
  double wait_s = 30;
  bool follow = false;
};

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// One GET; the HTTP status (0: no connection) and the body.
int Get(const std::string& url, const std::string& token, double timeout_s,
        std::string* body, std::string* error) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) {
    *error = "curl_easy_init failed";
    return 0;
  }
  body->clear();
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(timeout_s * 1000));  // NOLINT
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http");
  curl_slist* headers = nullptr;
  if (!token.empty()) {
    headers =
        curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }
  CURLcode rc = curl_easy_perform(curl);
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

int Run(Options o) {
  if (o.status.empty()) {
    if (o.config.empty()) {
      o.status = Config{}.status.listen;
    } else {
      auto config = LoadConfigFile(o.config);
      if (!config.ok()) {
        std::fprintf(stderr, "freshd changes: %s\n",
                     config.status().ToString().c_str());
        return 2;
      }
      o.status = config.value().status.listen;
      if (o.token_file.empty()) o.token_file = config.value().status.token_file;
    }
  }
  std::string token;
  if (!o.token_file.empty()) {
    auto t = daemon::ReadTokenFile(o.token_file);
    if (!t.ok()) {
      std::fprintf(stderr, "freshd changes: token file: %s\n",
                   t.status().ToString().c_str());
      return 2;
    }
    token = *t;
  }
  // A wildcard listen address is reached on loopback.
  std::string host = o.status;
  if (host.rfind("0.0.0.0:", 0) == 0) host = "127.0.0.1" + host.substr(7);
  if (host.rfind("[::]:", 0) == 0) host = "[::1]" + host.substr(4);
  uint64_t cursor = o.since;
  bool down_noted = false;
  for (;;) {
    const double wait = o.follow ? o.wait_s : 0;
    const std::string url = "http://" + host +
                            "/changes?since=" + std::to_string(cursor) +
                            "&limit=" + std::to_string(o.limit) +
                            (wait > 0 ? "&wait=" + std::to_string(wait) : "");
    std::string body, error;
    const int status = Get(url, token, wait + 15, &body, &error);
    if (status != 200) {
      const std::string what =
          status == 0 ? error : "HTTP " + std::to_string(status) + ": " + body;
      if (status == 409 || status == 400) {
        std::fprintf(stderr, "freshd changes: %s\n", what.c_str());
        return 2;
      }
      if (!o.follow) {
        std::fprintf(stderr, "freshd changes: %s: %s\n", host.c_str(),
                     what.c_str());
        return 1;
      }
      if (!down_noted) {
        std::fprintf(stderr, "freshd changes: %s: %s; retrying\n", host.c_str(),
                     what.c_str());
        down_noted = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    down_noted = false;
    // The last line is the cursor line.
    const size_t end = body.find_last_not_of('\n');
    const size_t start =
        end == std::string::npos ? 0 : body.rfind('\n', end) + 1;
    nlohmann::json last = nlohmann::json::parse(
        body.substr(start, end == std::string::npos ? 0 : end - start + 1),
        nullptr, false);
    if (last.is_discarded() || !last.contains("next_cursor")) {
      std::fprintf(stderr, "freshd changes: malformed reply from %s\n",
                   host.c_str());
      return 1;
    }
    std::fwrite(body.data(), 1, body.size(), stdout);
    std::fflush(stdout);
    if (last.value("gap", false)) {
      std::fprintf(stderr,
                   "freshd changes: events after %llu were dropped by "
                   "retention before they were read; resuming at %llu\n",
                   static_cast<unsigned long long>(cursor),
                   last.value("oldest", 0ull));
    }
    cursor = last["next_cursor"].get<uint64_t>();
    if (!o.follow && !last.value("more", false)) return 0;
  }
}

}  // namespace

void AddChangesCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "changes",
      "Tail the running daemon's change feed (GET /changes): JSON Lines on "
      "stdout, each reply ending in its cursor line");
  cmd->add_option("--config", o->config,
                  "freshd.toml whose [status] listen and token_file to use");
  cmd->add_option("--status", o->status,
                  "status endpoint ADDRESS:PORT (default: the config's, or " +
                      Config{}.status.listen + ")");
  cmd->add_option("--token-file", o->token_file, "bearer token file");
  cmd->add_option("--since", o->since,
                  "cursor: the last seq already processed (0: from the "
                  "start)");
  cmd->add_option("--limit", o->limit, "events per request")
      ->check(CLI::Range(size_t{1}, daemon::kFeedMaxLimit));
  cmd->add_option("--wait", o->wait_s, "long-poll seconds per request")
      ->check(CLI::Range(0.0, daemon::kFeedMaxWaitS));
  cmd->add_flag("--follow,-f", o->follow, "keep waiting for new events");
  cmd->callback([o, exit_code] { *exit_code = Run(*o); });
}

}  // namespace freshd::cli

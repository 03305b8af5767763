#include "cli/status_client.h"

#include <curl/curl.h>

#include "conf/config.h"
#include "daemon/http_server.h"

namespace freshd::cli {
namespace {

size_t AppendReply(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

}  // namespace

void AddStatusEndpointOptions(CLI::App* cmd, StatusEndpoint* endpoint) {
  cmd->add_option("--config", endpoint->config,
                  "freshd.toml whose [status] listen and token_file to use");
  cmd->add_option("--status", endpoint->status,
                  "status endpoint ADDRESS:PORT (default: the config's, or " +
                      Config{}.status.listen + ")");
  cmd->add_option("--token-file", endpoint->token_file, "bearer token file");
}

Status ResolveStatusEndpoint(StatusEndpoint* e, bool loopback_only,
                             std::string* token) {
  if (e->status.empty()) {
    if (e->config.empty()) {
      e->status = Config{}.status.listen;
    } else {
      auto config = LoadConfigFile(e->config);
      if (!config.ok()) return config.status();
      e->status = config.value().status.listen;
      if (e->token_file.empty()) {
        e->token_file = config.value().status.token_file;
      }
    }
  }
  token->clear();
  if (!e->token_file.empty()) {
    auto t = daemon::ReadTokenFile(e->token_file);
    if (!t.ok()) {
      return Status::InvalidArgument("token file: " + t.status().ToString());
    }
    *token = *t;
  }
  if (e->status.rfind("0.0.0.0:", 0) == 0) {
    e->status = "127.0.0.1" + e->status.substr(7);
  }
  if (e->status.rfind("[::]:", 0) == 0)
    e->status = "[::1]" + e->status.substr(4);
  if (loopback_only && e->status.rfind("localhost:", 0) != 0 &&
      !daemon::IsLoopbackListen(e->status)) {
    return Status::InvalidArgument(
        e->status +
        " is not a loopback address: this is sent only to a "
        "daemon on this machine");
  }
  return Status::OK();
}

int StatusRequest(const std::string& url, const std::string& token,
                  const std::string* post_json, double timeout_s,
                  std::string* body, std::string* error) {
  body->clear();
  CURL* curl = curl_easy_init();
  if (curl == nullptr) {
    *error = "curl_easy_init failed";
    return 0;
  }
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendReply);
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
  }
  if (post_json != nullptr) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post_json->c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE,
                     static_cast<long>(post_json->size()));  // NOLINT
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

}  // namespace freshd::cli

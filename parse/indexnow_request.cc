#include "parse/indexnow_request.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/ascii.h"
#include "parse/url.h"

namespace freshd::parse {
namespace {

IndexNowParse Fail(int status, std::string error) {
  IndexNowParse out;
  out.status = status;
  out.error = std::move(error);
  return out;
}

// The deepest nesting of arrays and objects in `json` (outside strings),
// stopping once past `limit`; the text need not be valid JSON.
int NestingDepth(std::string_view json, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : json) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// `host` of the ping, lower case without a port; "" if not a host name or
// IP literal.
std::string PingHost(std::string_view host) {
  std::string out = AsciiLowerCopy(host);
  if (!out.empty() && out.front() == '[') {
    const size_t close = out.find(']');
    if (close == std::string::npos) return "";
    out.resize(close + 1);
  } else if (const size_t colon = out.find(':'); colon != std::string::npos) {
    out.resize(colon);
  }
  if (out.empty() || out.size() > 253) return "";
  for (char c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '[' || c == ']' || c == ':';
    if (!ok) return "";
  }
  return out;
}

// Checks and normalizes the fields every ping has, whichever its form.
IndexNowParse Finish(std::string host, std::string key,
                     std::optional<std::string> key_location,
                     const std::vector<std::string>& raw_urls) {
  if (!IsIndexNowKey(key)) {
    return Fail(422, "the key must be " + std::to_string(kMinIndexNowKey) +
                         " to " + std::to_string(kMaxIndexNowKey) +
                         " characters of a-z, A-Z, 0-9 and '-'");
  }
  IndexNowParse out;
  out.request.host = PingHost(host);
  if (out.request.host.empty()) return Fail(400, "\"host\" is not a host name");
  out.request.key = std::move(key);
  if (key_location) {
    auto location = NormalizeUrl(*key_location);
    if (!location.ok()) {
      return Fail(400, "keyLocation: " + location.status().message());
    }
    if (UrlHost(location.value()) != out.request.host) {
      return Fail(422, "keyLocation is not on host " + out.request.host);
    }
    out.request.key_location = std::move(location).value();
  }
  // URLs must lie under keyLocation's folder when it is given.
  std::string folder;
  if (!out.request.key_location.empty()) {
    const std::string& at = out.request.key_location;
    folder = at.substr(0, at.find('?'));
    folder.resize(folder.rfind('/') + 1);
  }
  out.request.urls.reserve(raw_urls.size());
  for (const std::string& raw : raw_urls) {
    auto url = NormalizeUrl(raw);
    if (!url.ok()) {
      return Fail(
          400, "URL \"" + raw.substr(0, 200) + "\": " + url.status().message());
    }
    if (UrlHost(url.value()) != out.request.host) {
      return Fail(422, "URL " + url.value().substr(0, 200) +
                           " is not on host " + out.request.host);
    }
    if (!folder.empty() && !url.value().starts_with(folder)) {
      return Fail(422, "URL " + url.value().substr(0, 200) +
                           " is not under keyLocation's folder " + folder);
    }
    out.request.urls.push_back(std::move(url).value());
  }
  return out;
}

}  // namespace

bool IsIndexNowKey(std::string_view key) {
  if (key.size() < kMinIndexNowKey || key.size() > kMaxIndexNowKey) {
    return false;
  }
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '-';
    if (!ok) return false;
  }
  return true;
}

IndexNowParse ParseIndexNowQuery(std::string_view query) {
  std::optional<std::string> url = FormValue(query, "url");
  std::optional<std::string> key = FormValue(query, "key");
  if (!url || url->empty() || !key) {
    return Fail(400, "usage: /indexnow?url=URL&key=KEY[&keyLocation=URL]");
  }
  auto normalized = NormalizeUrl(*url);
  if (!normalized.ok()) {
    return Fail(400, "url: " + normalized.status().message());
  }
  return Finish(std::string(UrlHost(normalized.value())), std::move(*key),
                FormValue(query, "keyLocation"), {normalized.value()});
}

IndexNowParse ParseIndexNowJson(std::string_view content_type,
                                std::string_view body) {
  const std::string_view type = content_type.substr(0, content_type.find(';'));
  if (AsciiLowerCopy(TrimAsciiBlanks(type)) != "application/json") {
    return Fail(400, "Content-Type must be application/json; charset=utf-8");
  }
  if (body.size() > kMaxIndexNowBodyBytes) {
    return Fail(
        400, "body over " + std::to_string(kMaxIndexNowBodyBytes) + " bytes");
  }
  if (NestingDepth(body, kMaxIndexNowJsonDepth) > kMaxIndexNowJsonDepth) {
    return Fail(400, "JSON nested deeper than " +
                         std::to_string(kMaxIndexNowJsonDepth) + " levels");
  }
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Fail(400,
                "body must be a JSON object {\"host\", \"key\", "
                "\"keyLocation\"?, \"urlList\": [...]}");
  }
  const auto field = [&j](const char* name) -> const nlohmann::json* {
    auto it = j.find(name);
    return it == j.end() ? nullptr : &*it;
  };
  const nlohmann::json* host = field("host");
  const nlohmann::json* key = field("key");
  const nlohmann::json* location = field("keyLocation");
  const nlohmann::json* list = field("urlList");
  if (host == nullptr || !host->is_string()) {
    return Fail(400, "\"host\" must be a string");
  }
  if (key == nullptr || !key->is_string()) {
    return Fail(400, "\"key\" must be a string");
  }
  if (location != nullptr && !location->is_string() && !location->is_null()) {
    return Fail(400, "\"keyLocation\" must be a string");
  }
  if (list == nullptr || !list->is_array() || list->empty()) {
    return Fail(400, "\"urlList\" must be a non-empty array of URLs");
  }
  if (list->size() > kMaxIndexNowUrls) {
    return Fail(400, "at most " + std::to_string(kMaxIndexNowUrls) +
                         " URLs per request");
  }
  std::vector<std::string> urls;
  urls.reserve(list->size());
  for (const auto& u : *list) {
    if (!u.is_string()) return Fail(400, "\"urlList\" must hold strings");
    urls.push_back(u.get<std::string>());
  }
  std::optional<std::string> key_location;
  if (location != nullptr && location->is_string()) {
    key_location = location->get<std::string>();
  }
  return Finish(host->get<std::string>(), key->get<std::string>(),
                std::move(key_location), urls);
}

std::string KeyFileUrl(const IndexNowRequest& request) {
  if (!request.key_location.empty()) return request.key_location;
  if (request.urls.empty()) return "";
  return UrlOrigin(request.urls.front()) + "/" + request.key + ".txt";
}

}  // namespace freshd::parse

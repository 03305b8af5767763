#include "conf/config.h"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <toml.hpp>

#include "base/ascii.h"
#include "conf/config_schema.h"
#include "conf/rules.h"
#include "conf/toml_text.h"
#include "conf/units.h"
#include "re2/re2.h"

namespace freshd {
namespace {

constexpr size_t kMaxConfigBytes = kMaxTomlBytes;  // a config file is small

bool OneOf(const std::string& s, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return true;
  for (const auto& a : allowed) {
    if (s == a) return true;
  }
  return false;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string FormatNumber(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), x);  // shortest
  return std::string(buf, ec == std::errc() ? end : buf);
}

// Checks the bounds and enumerations of one typed value; empty when fine.
// Shared by the loader (which adds a file:line) and ValidateConfig.
std::string RangeError(double v, double lo, double hi) {
  if (std::isnan(v) || v < lo || v > hi) {
    return "must be between " + FormatNumber(lo) + " and " + FormatNumber(hi) +
           ", got " + FormatNumber(v);
  }
  return {};
}

// Visitor: checks the bounds of an already typed Config.
class RangeChecker {
 public:
  struct Problem {
    std::string section, key, message;
  };

  void Section(const char* name) { section_ = name; }
  template <typename S>
  void String(const char* key, S* v, const std::vector<std::string>& one_of) {
    if (!OneOf(*v, one_of)) {
      Fail(key, "must be one of " + Join(one_of) + ", got \"" + *v + "\"");
    }
  }
  template <typename I>
  void Int(const char* key, I* v, long long lo, long long hi) {
    if (static_cast<long double>(*v) < lo ||
        static_cast<long double>(*v) > hi) {
      Fail(key, "must be between " + std::to_string(lo) + " and " +
                    std::to_string(hi) + ", got " + std::to_string(*v));
    }
  }
  template <typename D>
  void Double(const char* key, D* v, double lo, double hi) {
    Check(key, RangeError(*v, lo, hi));
  }
  template <typename D>
  void Duration(const char* key, D* v, double lo, double hi) {
    if (std::isnan(*v) || *v < lo || *v > hi) {
      Fail(key, "must be between " + FormatDuration(lo) + " and " +
                    FormatDuration(hi) + ", got " + FormatDuration(*v));
    }
  }
  template <typename U>
  void Size(const char* key, U* v, uint64_t lo, uint64_t hi) {
    if (*v < lo || *v > hi) {
      Fail(key, "must be between " + FormatSize(lo) + " and " + FormatSize(hi) +
                    ", got " + FormatSize(*v));
    }
  }
  template <typename B>
  void Bool(const char*, B*) {}
  template <typename L>
  void StringList(const char*, L*) {}
  template <typename M>
  void StringMap(const char*, M*) {}

  const std::optional<Problem>& problem() const { return problem_; }
  void Fail(const char* key, const std::string& message) {
    if (!problem_) problem_ = Problem{section_, key, message};
  }
  void Fail(const char* section, const char* key, const std::string& message) {
    if (!problem_) problem_ = Problem{section, key, message};
  }

 private:
  void Check(const char* key, const std::string& message) {
    if (!message.empty()) Fail(key, message);
  }
  std::string section_;
  std::optional<Problem> problem_;
};

bool IsHeaderSafe(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool IsIpLiteral(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// A DNS name: labels of letters, digits and '-', dot-separated, <= 253.
bool IsHostName(const std::string& s) {
  if (s.empty() || s.size() > 253 || s.front() == '.' || s.back() == '.' ||
      s.find("..") != std::string::npos) {
    return false;
  }
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

// 127.0.0.0/8, ::1 or ::ffff:127.x literals, with a port: "host:port".
bool IsLoopbackListen(const std::string& s) {
  std::string host = s.substr(0, s.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  unsigned char buf[16];
  if (inet_pton(AF_INET, host.c_str(), buf) == 1) return buf[0] == 127;
  if (inet_pton(AF_INET6, host.c_str(), buf) != 1) return false;
  static constexpr unsigned char kLoop[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                              0, 0, 0, 0, 0, 0, 0, 1};
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0,    0,
                                                0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(buf, kLoop, 16) == 0 ||
         (std::memcmp(buf, kMapped, 12) == 0 && buf[12] == 127);
}

// "host:port" or "[v6]:port" with a literal address and a port 1..65535.
bool IsListenAddress(const std::string& s) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon + 1 >= s.size()) return false;
  std::string host = s.substr(0, colon), port = s.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  int p = std::stoi(port);
  return p >= 1 && p <= 65535 && IsIpLiteral(host);
}

// An IP address, or one with a prefix length: "10.0.0.0/8", "fd00::/8".
bool IsCidr(const std::string& s) {
  const size_t slash = s.find('/');
  const std::string ip = s.substr(0, slash);
  unsigned char buf[16];
  int bits = 0;
  if (inet_pton(AF_INET, ip.c_str(), buf) == 1) {
    bits = 32;
  } else if (inet_pton(AF_INET6, ip.c_str(), buf) == 1) {
    bits = 128;
  } else {
    return false;
  }
  if (slash == std::string::npos) return true;
  const std::string len = s.substr(slash + 1);
  if (len.empty() || len.size() > 3 ||
      len.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  return std::stoi(len) <= bits;
}

// A cluster node's name: a key of the member bucket and a NATS subject
// token (empty: the host name, checked when the daemon starts).
bool IsNodeName(std::string_view name) {
  if (name.size() > 64) return false;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
    if (!ok) return false;
  }
  return true;
}

// Why `url` is not a proxy URL freshd accepts, or "".
std::string ProxyUrlProblem(const std::string& url) {
  const size_t sep = url.find("://");
  const std::string scheme = sep == std::string::npos ? "" : url.substr(0, sep);
  if (scheme == "socks5h" || scheme == "socks4a") {
    return "\"" + scheme +
           "://\" makes the proxy resolve names (freshd resolves and checks "
           "every target itself): use socks5://";
  }
  if (scheme != "http" && scheme != "https" && scheme != "socks5") {
    return "must be http://, https:// or socks5://host:port, got \"" + url +
           "\"";
  }
  std::string rest = url.substr(sep + 3);
  if (rest.ends_with("/")) rest.pop_back();
  if (rest.find('@') != std::string::npos) {
    return "must not hold credentials (put \"user:password\" in [fetch] "
           "proxy_credentials_file)";
  }
  const size_t colon = rest.rfind(':');
  const std::string host =
      colon == std::string::npos ? "" : rest.substr(0, colon);
  const std::string port =
      colon == std::string::npos ? "" : rest.substr(colon + 1);
  const std::string bare =
      host.size() > 2 && host.front() == '[' && host.back() == ']'
          ? host.substr(1, host.size() - 2)
          : host;
  if (bare.empty() || (!IsHostName(bare) && !IsIpLiteral(bare)) ||
      port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) == 0 || std::stoi(port) > 65535) {
    return "must be " + scheme + "://host:port (a port, no path), got \"" +
           url + "\"";
  }
  return "";
}

// Why `origin` is not an origin rule's "http[s]://host[:port]", or "".
std::string OriginProblem(const std::string& origin) {
  const std::string want =
      "must be an origin \"http[s]://host[:port]\" (no path, no "
      "credentials, not a pattern), got \"" +
      origin + "\"";
  const size_t sep = origin.find("://");
  if (sep == std::string::npos || OriginOfUrl(origin).empty()) return want;
  std::string authority = origin.substr(sep + 3);
  if (authority.ends_with("/")) authority.pop_back();
  if (authority.find_first_of("/?#@*") != std::string::npos) return want;
  std::string host = OriginOfUrl(origin);
  host = host.substr(host.find("://") + 3);
  host = host.substr(0, host.rfind(':'));
  const std::string bare = host.size() > 2 && host.front() == '['
                               ? host.substr(1, host.size() - 2)
                               : host;
  if (!IsHostName(bare) && !IsIpLiteral(bare)) return want;
  return "";
}

// An HTTP field name (RFC 9110 §5.6.2 token).
bool IsHeaderName(std::string_view name) {
  if (name.empty()) return false;
  for (char ch : name) {
    const bool ok =
        IsAsciiAlpha(ch) || IsAsciiDigit(ch) ||
        std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// Fields an origin rule's `headers` may not set: framing and connection
// fields (curl owns them), what freshd sends itself (User-Agent, which
// robots.txt matches; Accept-Encoding, decoded here; the conditional-GET
// validators), and credentials, which have keys of their own so that they
// are known secrets (Authorization: credentials_file; Cookie: cookie) or
// belong to the proxy (Proxy-Authorization: [fetch] proxy_credentials_file).
bool IsReservedHeader(std::string_view name) {
  static constexpr std::string_view kReserved[] = {"host",
                                                   "content-length",
                                                   "transfer-encoding",
                                                   "connection",
                                                   "keep-alive",
                                                   "upgrade",
                                                   "te",
                                                   "trailer",
                                                   "expect",
                                                   "user-agent",
                                                   "accept-encoding",
                                                   "if-none-match",
                                                   "if-modified-since",
                                                   "authorization",
                                                   "cookie",
                                                   "proxy-authorization",
                                                   "proxy-connection"};
  for (std::string_view r : kReserved) {
    if (EqualsIgnoreAsciiCase(name, r)) return true;
  }
  return false;
}

// No CR, LF, NUL or other control characters (tab allowed), within bounds.
bool IsHeaderValue(const std::string& value) {
  if (value.size() > kMaxRuleHeaderValueBytes) return false;
  for (unsigned char c : value) {
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

bool HasRequestKeys(const RuleConfig& r) {
  return !r.headers.empty() || !r.cookie.empty() ||
         !r.credentials_file.empty() || !r.credential.empty();
}

// The checks of an origin rule's request keys; calls `fail` and returns
// the key at fault, or "".
template <typename Fail>
std::string_view RequestKeysProblem(const RuleConfig& r, Fail* fail) {
  if (!HasRequestKeys(r)) return "";
  if (r.origin.empty()) {
    const char* key = !r.headers.empty()            ? "headers"
                      : !r.cookie.empty()           ? "cookie"
                      : !r.credentials_file.empty() ? "credentials_file"
                                                    : "credential";
    (*fail)(key,
            "needs an origin rule (origin = \"https://host[:port]\"): "
            "request headers and credentials go to exactly one origin, "
            "never to a host or url pattern");
    return key;
  }
  if (r.headers.size() > kMaxRuleHeaders) {
    (*fail)("headers",
            "at most " + std::to_string(kMaxRuleHeaders) + " headers");
    return "headers";
  }
  std::set<std::string> lower_names;
  for (const auto& [name, value] : r.headers) {
    if (!lower_names.insert(AsciiLowerCopy(name)).second) {
      (*fail)("headers",
              "\"" + name + "\" is set twice (header names ignore case)");
      return "headers";
    }
    if (!IsHeaderName(name) || name.size() > kMaxRuleHeaderNameBytes) {
      (*fail)("headers", "\"" + name +
                             "\" is not a header name (letters, digits, "
                             "!#$%&'*+-.^_`|~; at most " +
                             std::to_string(kMaxRuleHeaderNameBytes) +
                             " bytes)");
      return "headers";
    }
    if (IsReservedHeader(name)) {
      (*fail)("headers", "\"" + name +
                             "\" may not be set here (framing, freshd's own "
                             "or a credential: use cookie or "
                             "credentials_file)");
      return "headers";
    }
    if (!IsHeaderValue(value)) {
      (*fail)("headers", "the value of \"" + name +
                             "\" holds a control character (CR, LF, NUL) "
                             "or is longer than " +
                             std::to_string(kMaxRuleHeaderValueBytes) +
                             " bytes");
      return "headers";
    }
  }
  if (!IsHeaderValue(r.cookie)) {
    (*fail)("cookie",
            "holds a control character (CR, LF, NUL) or is longer "
            "than " +
                std::to_string(kMaxRuleHeaderValueBytes) + " bytes");
    return "cookie";
  }
  if (!r.credentials_file.empty() && !r.credential.empty()) {
    (*fail)("credential", "set credentials_file or credential, not both");
    return "credential";
  }
  if (!r.credential.empty() &&
      (r.credential.find('/') != std::string::npos || r.credential == "." ||
       r.credential == ".." || !IsHeaderSafe(r.credential))) {
    (*fail)("credential",
            "must be a file name in $CREDENTIALS_DIRECTORY (systemd "
            "LoadCredential=), without '/'");
    return "credential";
  }
  return "";
}

// How a [[rule]] is named in messages: [rule "name"], or [rule #3] (1-based)
// while it has no name.
std::string RuleSection(const RuleConfig& rule, size_t index) {
  return rule.name.empty() ? "rule #" + std::to_string(index + 1)
                           : "rule \"" + rule.name + "\"";
}

// The checks of one [[rule]] beyond its keys' ranges.
void CheckRule(const RuleConfig& r, size_t index, const SchedConfig& sched,
               std::set<std::string>* names, RangeChecker* check) {
  const std::string section = RuleSection(r, index);
  const auto fail = [&](const char* key, const std::string& message) {
    check->Fail(section.c_str(), key, message);
  };
  if (r.name.empty() || r.name.size() > kMaxRuleNameBytes ||
      !IsHeaderSafe(r.name) || r.name.find('"') != std::string::npos) {
    return fail("name", "required: at most " +
                            std::to_string(kMaxRuleNameBytes) +
                            " printable characters, no '\"'");
  }
  if (!names->insert(r.name).second) {
    return fail("name", "another rule has this name");
  }
  const int matchers = !r.host.empty() + !r.url.empty() + !r.origin.empty();
  if (matchers != 1) {
    return fail(!r.origin.empty() ? "origin"
                : r.host.empty()  ? "url"
                                  : "host",
                "exactly one of host, url and origin is required");
  }
  if (!r.origin.empty()) {
    if (std::string why = OriginProblem(r.origin); !why.empty()) {
      return fail("origin", why);
    }
  }
  if (std::string_view key = RequestKeysProblem(r, &fail); !key.empty()) {
    return;
  }
  if (!r.host.empty()) {
    const std::string domain =
        r.host.starts_with("*.") ? r.host.substr(2) : r.host;
    if (!IsHostName(domain)) {
      return fail("host",
                  "must be a host name or *.domain, got \"" + r.host + "\"");
    }
  }
  if (r.url.size() > kMaxRulePatternBytes) {
    return fail("url", "longer than " + std::to_string(kMaxRulePatternBytes) +
                           " bytes");
  }
  if (!r.url.empty()) {
    const re2::RE2 re(r.url, re2::RE2::Quiet);
    if (!re.ok()) {
      return fail(
          "url", "invalid regular expression \"" + r.url + "\": " + re.error());
    }
  }
  if (!r.proxy.empty()) {
    if (r.host.empty()) {
      return fail("proxy",
                  "needs a host rule (robots.txt goes the way its host's "
                  "pages go)");
    }
    if (r.proxy != "direct") {
      if (std::string why = ProxyUrlProblem(r.proxy); !why.empty()) {
        return fail("proxy", "\"direct\" or a proxy URL: " + why);
      }
    }
  }
  if (r.min_interval_s == 0 && r.max_interval_s == 0 && r.importance == 0 &&
      r.proxy.empty() && !HasRequestKeys(r)) {
    return fail("name",
                "sets none of min_interval, max_interval, importance, proxy, "
                "headers, cookie, credentials_file, credential");
  }
  if (r.max_interval_s > 0 && r.min_interval_s > r.max_interval_s) {
    return fail("min_interval", "must not exceed the rule's max_interval");
  }
  if (r.max_interval_s > 0 && r.max_interval_s < sched.min_interval_s) {
    return fail("max_interval", "must not be below [sched] min_interval");
  }
}

// Bounds of every key, then the rules that relate keys to each other.
std::optional<RangeChecker::Problem> FindProblem(const Config& c) {
  RangeChecker check;
  VisitConfig(c, check);
  for (size_t i = 0; i < c.rules.size() && !check.problem(); ++i) {
    check.Section(RuleSection(c.rules[i], i).c_str());
    VisitRule(c.rules[i], check);
  }
  if (check.problem()) return check.problem();
  if (c.crawler.user_agent.empty() || !IsHeaderSafe(c.crawler.user_agent)) {
    check.Fail("crawler", "user_agent",
               "must be non-empty printable text (no control characters)");
  }
  if (!IsHeaderSafe(c.crawler.contact_url)) {
    check.Fail("crawler", "contact_url", "must not contain control characters");
  }
  for (const char* which : {"include", "exclude"}) {
    const auto& list =
        std::string(which) == "include" ? c.crawler.include : c.crawler.exclude;
    for (const auto& pattern : list) {
      const re2::RE2 re(pattern, re2::RE2::Quiet);
      if (!re.ok()) {
        check.Fail(
            "crawler", which,
            "invalid regular expression \"" + pattern + "\": " + re.error());
      }
    }
  }
  if (c.fetch.connect_timeout_s > c.fetch.timeout_s) {
    check.Fail("fetch", "connect_timeout", "must not exceed [fetch] timeout");
  }
  if (c.fetch.content_types.empty()) {
    check.Fail("fetch", "content_types", "must list at least one type");
  }
  for (const auto& [host, ip] : c.fetch.resolve) {
    if (host.empty() || !IsIpLiteral(ip)) {
      check.Fail(
          "fetch", "resolve",
          "\"" + host + "\" must map to an IP address, got \"" + ip + "\"");
    }
  }
  if (!c.fetch.proxy.empty()) {
    if (std::string why = ProxyUrlProblem(c.fetch.proxy); !why.empty()) {
      check.Fail("fetch", "proxy", why);
    }
  }
  if (c.politeness.backoff_initial_s > c.politeness.backoff_max_s) {
    check.Fail("politeness", "backoff_initial",
               "must not exceed [politeness] backoff_max");
  }
  if (c.sched.min_interval_s > c.sched.max_interval_s) {
    check.Fail("sched", "min_interval", "must not exceed [sched] max_interval");
  }
  if (!IsListenAddress(c.status.listen)) {
    check.Fail("status", "listen",
               "must be IP:PORT such as 127.0.0.1:8931 or [::1]:8931, got \"" +
                   c.status.listen + "\"");
  } else if (!IsLoopbackListen(c.status.listen) &&
             c.status.token_file.empty()) {
    check.Fail("status", "token_file",
               "required when listen is not a loopback address (" +
                   c.status.listen + ")");
  }
  if (c.status.allowed_hosts.size() > 64) {
    check.Fail("status", "allowed_hosts", "at most 64 names");
  }
  for (const auto& name : c.status.allowed_hosts) {
    if (!IsHostName(name)) {
      check.Fail("status", "allowed_hosts",
                 "\"" + name +
                     "\" must be a host name (letters, digits, '-', '.'; no "
                     "port or scheme)");
    }
  }
  if (!c.push.listen.empty() && !IsListenAddress(c.push.listen)) {
    check.Fail("push", "listen",
               "must be empty (off) or IP:PORT such as 0.0.0.0:8932 or "
               "[::]:8932, got \"" +
                   c.push.listen + "\"");
  } else if (!c.push.listen.empty() && c.push.listen == c.status.listen) {
    check.Fail("push", "listen",
               "must differ from [status] listen (the push listener is "
               "public, the status endpoint is not)");
  }
  if (!c.push.public_url.empty() &&
      !(c.push.public_url.starts_with("http://") ||
        c.push.public_url.starts_with("https://"))) {
    check.Fail("push", "public_url",
               "must be an http:// or https:// URL, got \"" +
                   c.push.public_url + "\"");
  } else if (!IsHeaderSafe(c.push.public_url) ||
             c.push.public_url.find(' ') != std::string::npos) {
    check.Fail("push", "public_url", "must not contain spaces or controls");
  }
  if (c.push.trusted_proxies.size() > 64) {
    check.Fail("push", "trusted_proxies", "at most 64 entries");
  }
  for (const auto& cidr : c.push.trusted_proxies) {
    if (!IsCidr(cidr)) {
      check.Fail("push", "trusted_proxies",
                 "\"" + cidr +
                     "\" must be an IP address or CIDR such as 10.0.0.0/8 or "
                     "fd00::/8");
    }
  }
  if (c.push.max_connections_per_client > c.push.max_connections) {
    check.Fail("push", "max_connections_per_client",
               "must not exceed [push] max_connections");
  }
  if (c.cluster.heartbeat_s * 2 > c.cluster.ttl_s) {
    check.Fail("cluster", "heartbeat", "must be at most half of [cluster] ttl");
  }
  if (!IsNodeName(c.cluster.node)) {
    check.Fail("cluster", "node",
               "must be at most 64 letters, digits, '-' or '_', got \"" +
                   c.cluster.node + "\"");
  }
  if (c.rules.size() > kMaxRules) {
    check.Fail("rule", "", "at most " + std::to_string(kMaxRules) + " rules");
  }
  std::set<std::string> rule_names;
  for (size_t i = 0; i < c.rules.size() && !check.problem(); ++i) {
    CheckRule(c.rules[i], i, c.sched, &rule_names, &check);
  }
  if (!IsHeaderSafe(c.cluster.nats_url) ||
      c.cluster.nats_url.find(' ') != std::string::npos) {
    check.Fail("cluster", "nats_url",
               "must be a NATS URL such as nats://127.0.0.1:4222 (no spaces "
               "or control characters)");
  }
  return check.problem();
}

// Visitor: reads a parsed TOML document into a Config, remembering where
// each key stood so that every error names its line.
class TomlReader {
 public:
  TomlReader(const toml::value& root, std::string file)
      : root_(root), file_(std::move(file)) {}

  void Section(const char* name) {
    FinishSection();
    section_ = name;
    table_ = nullptr;
    seen_.clear();
    known_sections_.insert(name);
    if (!root_.contains(name)) return;
    const toml::value& t = root_.at(name);
    if (!t.is_table()) {
      FailAt(t, "", "must be a table [" + section_ + "]");
      return;
    }
    table_ = &t;
  }

  void String(const char* key, std::string* out,
              const std::vector<std::string>& one_of) {
    const toml::value* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_string()) return WrongType(*v, key, "a string");
    std::string s = v->as_string().str;
    if (!OneOf(s, one_of)) {
      return FailAt(*v, key,
                    "must be one of " + Join(one_of) + ", got \"" + s + "\"");
    }
    *out = std::move(s);
  }

  template <typename I>
  void Int(const char* key, I* out, long long lo, long long hi) {
    const toml::value* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_integer()) return WrongType(*v, key, "an integer");
    long long x = v->as_integer();
    if (x < lo || x > hi) {
      return FailAt(*v, key,
                    "must be between " + std::to_string(lo) + " and " +
                        std::to_string(hi) + ", got " + std::to_string(x));
    }
    *out = static_cast<I>(x);
  }

  void Double(const char* key, double* out, double lo, double hi) {
    const toml::value* v = Find(key);
    if (v == nullptr) return;
    double x;
    if (v->is_floating()) {
      x = v->as_floating();
    } else if (v->is_integer()) {
      x = static_cast<double>(v->as_integer());
    } else {
      return WrongType(*v, key, "a number");
    }
    std::string err = RangeError(x, lo, hi);
    if (!err.empty()) return FailAt(*v, key, err);
    *out = x;
  }

  void Bool(const char* key, bool* out) {
    const toml::value* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return WrongType(*v, key, "true or false");
    *out = v->as_boolean();
  }

  void Duration(const char* key, double* out, double lo, double hi) {
    const toml::value* v = Find(key);
    if (v == nullptr) return;
    double x;
    if (v->is_string()) {
      Result<double> d = ParseDuration(v->as_string().str);
      if (!d.ok()) return FailAt(*v, key, d.status().message());
      x = *d;
    } else if (v->is_integer()) {
      x = static_cast<double>(v->as_integer());
    } else if (v->is_floating()) {
      x = v->as_floating();
    } else {
      return WrongType(*v, key,
                       "a duration such as \"5s\" or a number of seconds");
    }
    if (std::isnan(x) || x < lo || x > hi) {
      return FailAt(*v, key,
                    "must be between " + FormatDuration(lo) + " and " +
                        FormatDuration(hi));
    }
    *out = x;
  }

  void Size(const char* key, uint64_t* out, uint64_t lo, uint64_t hi) {
    const toml::value* v = Find(key);
    if (v == nullptr) return;
    uint64_t x;
    if (v->is_string()) {
      Result<uint64_t> s = ParseSize(v->as_string().str);
      if (!s.ok()) return FailAt(*v, key, s.status().message());
      x = *s;
    } else if (v->is_integer()) {
      if (v->as_integer() < 0) return FailAt(*v, key, "must not be negative");
      x = static_cast<uint64_t>(v->as_integer());
    } else {
      return WrongType(*v, key,
                       "a size such as \"10MiB\" or a number of bytes");
    }
    if (x < lo || x > hi) {
      return FailAt(
          *v, key,
          "must be between " + FormatSize(lo) + " and " + FormatSize(hi));
    }
    *out = x;
  }

  void StringList(const char* key, std::vector<std::string>* out) {
    const toml::value* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_array()) return WrongType(*v, key, "an array of strings");
    std::vector<std::string> list;
    for (const toml::value& item : v->as_array()) {
      if (!item.is_string()) return WrongType(item, key, "an array of strings");
      list.push_back(item.as_string().str);
    }
    *out = std::move(list);
  }

  void StringMap(const char* key, std::map<std::string, std::string>* out) {
    const toml::value* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_table()) return WrongType(*v, key, "a table of strings");
    std::map<std::string, std::string> map;
    for (const auto& [k, item] : v->as_table()) {
      if (!item.is_string()) return WrongType(item, key, "a table of strings");
      map[k] = item.as_string().str;
    }
    *out = std::move(map);
  }

  // Reads [[rule]] (an array of tables) into `out`. Call after the visit,
  // before Finish.
  void Rules(std::vector<RuleConfig>* out) {
    FinishSection();
    table_ = nullptr;
    seen_.clear();
    known_sections_.insert("rule");
    if (!root_.is_table() || !root_.contains("rule")) return;
    const toml::value& v = root_.at("rule");
    section_ = "rule";
    if (!v.is_array()) {
      return FailAt(v, "", "must be an array of tables [[rule]]");
    }
    const auto& items = v.as_array();
    if (items.size() > kMaxRules) {
      return FailAt(v, "",
                    "at most " + std::to_string(kMaxRules) + " rules, got " +
                        std::to_string(items.size()));
    }
    for (size_t i = 0; i < items.size() && status_.ok(); ++i) {
      RuleConfig rule;
      section_ = RuleSection(rule, i);
      if (!items[i].is_table()) {
        return FailAt(items[i], "", "must be a table [[rule]]");
      }
      table_ = &items[i];
      seen_.clear();
      const std::string unnamed = section_;
      String("name", &rule.name, {});
      section_ = RuleSection(rule, i);
      lines_[section_ + ".name"] = lines_[unnamed + ".name"];
      VisitRule(rule, *this);
      FinishSection();
      table_ = nullptr;
      out->push_back(std::move(rule));
    }
  }

  // Reports unknown sections and keys. Call after the visit.
  void Finish() {
    FinishSection();
    if (!root_.is_table()) return;
    for (const auto& [name, value] : root_.as_table()) {
      if (known_sections_.count(name) == 0) {
        section_.clear();
        FailAt(value, "", "unknown section [" + name + "]");
      }
    }
  }

  // Line of a key seen during the visit, 0 if it was not in the file.
  int LineOf(const std::string& section, const std::string& key) const {
    auto it = lines_.find(section + "." + key);
    return it == lines_.end() ? 0 : it->second;
  }

  const Status& status() const { return status_; }

 private:
  const toml::value* Find(const char* key) {
    seen_.insert(key);
    if (table_ == nullptr || !table_->contains(key)) return nullptr;
    const toml::value& v = table_->at(key);
    lines_[section_ + "." + key] = static_cast<int>(v.location().line());
    return &v;
  }

  void FinishSection() {
    if (table_ == nullptr) return;
    for (const auto& [key, value] : table_->as_table()) {
      if (seen_.count(key) == 0) FailAt(value, key, "unknown key");
    }
  }

  void WrongType(const toml::value& v, const char* key,
                 const std::string& want) {
    FailAt(
        v, key,
        std::string("must be ") + want + ", got " + toml::stringize(v.type()));
  }

  void FailAt(const toml::value& v, const std::string& key,
              const std::string& message) {
    if (!status_.ok()) return;
    std::string where =
        file_ + ":" + std::to_string(v.location().line()) + ": ";
    std::string what =
        key.empty() ? "[" + section_ + "]" : "[" + section_ + "] " + key;
    if (section_.empty()) what = "";
    status_ = Status::InvalidArgument(
        where + (what.empty() ? "" : what + ": ") + message);
  }

  const toml::value& root_;
  std::string file_;
  std::string section_;
  const toml::value* table_ = nullptr;
  std::set<std::string> seen_;
  std::set<std::string> known_sections_;
  std::map<std::string, int> lines_;
  Status status_;
};

void AppendTomlString(std::string* out, const std::string& s) {
  *out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\r':
        *out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *out += buf;
        } else {
          *out += static_cast<char>(c);
        }
    }
  }
  *out += '"';
}

// Visitor: writes a Config as TOML, one "key = value" line per key, the
// sections and keys in the schema's order (check-config --print, read by
// operators). Written here rather than with toml11 3.7 (Debian 12), whose
// serializer orders tables by hash, breaks arrays one element a line and
// turns a string with a newline into a multi-line literal; what is read
// back is still toml11's (the round-trip tests in tests/conf/).
class TomlWriter {
 public:
  void Section(const char* name) {
    if (!out_.empty()) out_ += "\n";
    out_ += std::string("[") + name + "]\n";
  }
  void String(const char* key, const std::string* v,
              const std::vector<std::string>&) {
    Key(key);
    AppendTomlString(&out_, *v);
    out_ += "\n";
  }
  template <typename I>
  void Int(const char* key, const I* v, long long, long long) {
    Key(key);
    out_ += std::to_string(*v) + "\n";
  }
  void Double(const char* key, const double* v, double, double) {
    Key(key);
    std::string n = FormatNumber(*v);
    if (n.find_first_of(".eEn") == std::string::npos) n += ".0";
    out_ += n + "\n";
  }
  void Bool(const char* key, const bool* v) {
    Key(key);
    out_ += *v ? "true\n" : "false\n";
  }
  void Duration(const char* key, const double* v, double, double) {
    Key(key);
    AppendTomlString(&out_, FormatDuration(*v));
    out_ += "\n";
  }
  void Size(const char* key, const uint64_t* v, uint64_t, uint64_t) {
    Key(key);
    AppendTomlString(&out_, FormatSize(*v));
    out_ += "\n";
  }
  void StringList(const char* key, const std::vector<std::string>* v) {
    Key(key);
    out_ += "[";
    for (size_t i = 0; i < v->size(); ++i) {
      if (i) out_ += ", ";
      AppendTomlString(&out_, (*v)[i]);
    }
    out_ += "]\n";
  }
  void StringMap(const char* key, const std::map<std::string, std::string>* v) {
    Key(key);
    out_ += "{";
    bool first = true;
    for (const auto& [k, val] : *v) {
      out_ += first ? " " : ", ";
      first = false;
      AppendTomlString(&out_, k);
      out_ += " = ";
      AppendTomlString(&out_, val);
    }
    out_ += first ? "}\n" : " }\n";
  }
  const std::string& text() const { return out_; }

 private:
  void Key(const char* key) { out_ += std::string(key) + " = "; }
  std::string out_;
};

}  // namespace

const std::vector<std::string>& KnownPolicies() {
  static const std::vector<std::string> kPolicies = {
      "uniform", "nutch",     "stormcrawler",   "freshness",
      "age",     "ncis",      "ncis1",          "ncis2",
      "cis",     "longevity", "longevity-bound"};
  return kPolicies;
}

Status ValidateConfig(const Config& config) {
  auto problem = FindProblem(config);
  if (!problem) return Status::OK();
  return Status::InvalidArgument("[" + problem->section + "] " + problem->key +
                                 ": " + problem->message);
}

Result<Config> LoadConfigString(std::string_view text, std::string_view name) {
  const std::string file(name);
  Result<toml::value> parsed = ParseTomlText(text, name, kMaxConfigBytes);
  if (!parsed.ok()) return parsed.status();
  const toml::value& root = *parsed;

  Config config;
  TomlReader reader(root, file);
  VisitConfig(config, reader);
  reader.Rules(&config.rules);
  reader.Finish();
  if (!reader.status().ok()) return reader.status();

  if (auto problem = FindProblem(config)) {
    int line = reader.LineOf(problem->section, problem->key);
    std::string where = line > 0 ? file + ":" + std::to_string(line) : file;
    return Status::InvalidArgument(where + ": [" + problem->section + "] " +
                                   problem->key + ": " + problem->message);
  }
  return config;
}

Result<Config> LoadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open config file");
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    // Enough to be refused, with the line, by LoadConfigString.
    if (text.size() > kMaxConfigBytes) break;
  }
  if (in.bad()) return Status::IOError(path + ": read failed");
  return LoadConfigString(text, path);
}

std::string ConfigToToml(const Config& config) {
  TomlWriter writer;
  VisitConfig(config, writer);
  std::string out = writer.text();
  for (const RuleConfig& rule : config.rules) {
    TomlWriter one;
    VisitRule(rule, one);
    out += "\n[[rule]]\nname = ";
    AppendTomlString(&out, rule.name);
    out += "\n" + one.text();
  }
  return out;
}

std::string UserAgentHeader(const CrawlerConfig& crawler) {
  if (crawler.contact_url.empty()) return crawler.user_agent;
  return crawler.user_agent + " (+" + crawler.contact_url + ")";
}

std::string RobotsProductToken(const CrawlerConfig& crawler) {
  // RFC 9309 §2.2.1: the product token is [a-zA-Z_-]+; take the leading run.
  std::string token;
  for (char c : crawler.user_agent) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              c == '-';
    if (!ok) break;
    token += c;
  }
  return token.empty() ? "freshd" : token;
}

}  // namespace freshd

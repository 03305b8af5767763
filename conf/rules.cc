#include "conf/rules.h"

#include <re2/re2.h>

#include <cctype>

#include "base/ascii.h"

namespace freshd {

bool RuleHostMatches(std::string_view pattern, std::string_view host) {
  if (pattern.starts_with("*.")) {
    const std::string_view suffix = pattern.substr(1);  // ".example.com"
    return host.size() > suffix.size() &&
           EqualsIgnoreAsciiCase(host.substr(host.size() - suffix.size()),
                                 suffix);
  }
  return EqualsIgnoreAsciiCase(pattern, host);
}

std::string OriginOfUrl(std::string_view url) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) return "";
  const std::string scheme = AsciiLowerCopy(url.substr(0, sep));
  if (scheme != "http" && scheme != "https") return "";
  std::string_view authority = url.substr(sep + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  std::string_view host = authority, port;
  if (authority.starts_with("[")) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return "";
    host = authority.substr(0, close + 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(":")) return "";
    if (!rest.empty()) port = rest.substr(1);
  } else if (const size_t colon = authority.rfind(':');
             colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return "";
  unsigned number = scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    if (port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string_view::npos) {
      return "";
    }
    number = static_cast<unsigned>(std::stoul(std::string(port)));
    if (number == 0 || number > 65535) return "";
  }
  return scheme + "://" + AsciiLowerCopy(host) + ":" + std::to_string(number);
}

bool SameRequestKeys(const std::vector<RuleConfig>& a,
                     const std::vector<RuleConfig>& b) {
  const auto keys = [](const std::vector<RuleConfig>& rules) {
    std::vector<RuleConfig> out;
    for (const RuleConfig& r : rules) {
      if (r.origin.empty()) continue;
      RuleConfig k;
      k.origin = r.origin;
      k.headers = r.headers;
      k.cookie = r.cookie;
      k.credentials_file = r.credentials_file;
      k.credential = r.credential;
      out.push_back(std::move(k));
    }
    return out;
  };
  return keys(a) == keys(b);
}

RuleMatcher::RuleMatcher() = default;
RuleMatcher::~RuleMatcher() = default;
RuleMatcher::RuleMatcher(RuleMatcher&&) noexcept = default;
RuleMatcher& RuleMatcher::operator=(RuleMatcher&&) noexcept = default;

Result<RuleMatcher> RuleMatcher::Create(const std::vector<RuleConfig>& rules) {
  Config config;
  config.rules = rules;
  config.sched.min_interval_s = 0;  // (only the rules themselves here)
  if (Status s = ValidateConfig(config); !s.ok()) return s;
  RuleMatcher m;
  m.rules_ = rules;
  for (const RuleConfig& r : rules) {
    m.origins_.push_back(OriginOfUrl(r.origin));
    if (r.url.empty()) {
      m.patterns_.push_back(nullptr);
      continue;
    }
    auto re = std::make_unique<re2::RE2>(r.url, re2::RE2::Quiet);
    if (!re->ok()) {  // (ValidateConfig checked it)
      return Status::InvalidArgument("[rule \"" + r.name +
                                     "\"] url: " + re->error());
    }
    m.patterns_.push_back(std::move(re));
  }
  return m;
}

size_t RuleMatcher::Match(std::string_view url, std::string_view host) const {
  std::string url_origin;  // computed at the first origin rule
  for (size_t i = 0; i < rules_.size(); ++i) {
    bool hit;
    if (patterns_[i] != nullptr) {
      hit = re2::RE2::PartialMatch(url, *patterns_[i]);
    } else if (!origins_[i].empty()) {
      if (url_origin.empty()) url_origin = OriginOfUrl(url);
      hit = url_origin == origins_[i];
    } else {
      hit = RuleHostMatches(rules_[i].host, host);
    }
    if (hit) return i + 1;
  }
  return 0;
}

}  // namespace freshd

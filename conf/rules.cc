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
  for (size_t i = 0; i < rules_.size(); ++i) {
    const bool hit = patterns_[i] != nullptr
                         ? re2::RE2::PartialMatch(url, *patterns_[i])
                         : RuleHostMatches(rules_[i].host, host);
    if (hit) return i + 1;
  }
  return 0;
}

}  // namespace freshd

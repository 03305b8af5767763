// [[rule]] matching: which operator's rule (conf/config.h RuleConfig) a URL
// falls under. Compiled once from a validated config; the first rule that
// matches wins. An origin rule compares the URL's origin (OriginOfUrl)
// with its own, exactly. A host rule compares the URL's host (ASCII
// case-insensitive;
// "*.example.com" matches every subdomain of example.com, not example.com);
// a url rule is an RE2 search anywhere in the URL, as [crawler] include.
// Matching costs one comparison per host rule and one RE2 search per url
// rule ahead of the match. Immutable after Create: const methods are
// thread-safe.

#ifndef FRESHD_CONF_RULES_H_
#define FRESHD_CONF_RULES_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "conf/config.h"

namespace re2 {
class RE2;
}

namespace freshd {

// True if a [[rule]] host pattern ("name" or "*.domain") covers `host`.
bool RuleHostMatches(std::string_view pattern, std::string_view host);

// The origin of an http(s) URL (or of an origin rule's "http[s]://host[:port]")
// as "scheme://host:port": scheme and host lower case, the default port
// filled in, userinfo, path, query and fragment dropped; "" for anything
// else (another scheme, no host, a bad port). The form the fetcher names a
// transfer's origin in (fetch/transfer.h Transfer::origin).
std::string OriginOfUrl(std::string_view url);

// True if the two rule lists send the same request headers and credentials
// (each origin rule's origin, headers, cookie, credentials_file and
// credential, in order). These are read by the fetcher at start only: a
// reload that changes them needs a restart.
bool SameRequestKeys(const std::vector<RuleConfig>& a,
                     const std::vector<RuleConfig>& b);

class RuleMatcher {
 public:
  RuleMatcher();
  ~RuleMatcher();
  RuleMatcher(RuleMatcher&&) noexcept;
  RuleMatcher& operator=(RuleMatcher&&) noexcept;

  // InvalidArgument for rules ValidateConfig would refuse (more than
  // kMaxRules, no or two matchers, a bad pattern), naming the rule.
  [[nodiscard]] static Result<RuleMatcher> Create(
      const std::vector<RuleConfig>& rules);

  // The 1-based index of the first rule matching (url, host), 0: none.
  // `host` is the URL's host as the caller parsed it.
  size_t Match(std::string_view url, std::string_view host) const;

  const std::vector<RuleConfig>& rules() const { return rules_; }
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<RuleConfig> rules_;
  // By rule: its compiled url pattern (nullptr for a host rule).
  std::vector<std::unique_ptr<re2::RE2>> patterns_;
  // By rule: its origin as OriginOfUrl gives it ("" for other rules).
  std::vector<std::string> origins_;
};

}  // namespace freshd

#endif  // FRESHD_CONF_RULES_H_

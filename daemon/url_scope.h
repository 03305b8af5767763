// Which discovered URLs the crawl admits ([crawler] scope, include,
// exclude): a URL is in scope when its host is a seed host ("seed-hosts"),
// its registrable domain (Public Suffix List) is a seed's ("seed-domains")
// or any host is allowed ("any"); and it matches an include pattern (or
// there are none) and no exclude pattern. Patterns are RE2 regexes searched
// anywhere in the normalized URL: matching is linear in the URL's length
// whatever the pattern (no backtracking), so a hostile URL cannot stall the
// loop. Thread-safety: const methods are safe to call concurrently; Add
// needs external synchronization.
#ifndef FRESHD_DAEMON_URL_SCOPE_H_
#define FRESHD_DAEMON_URL_SCOPE_H_

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "conf/config.h"
#include "parse/public_suffix.h"

namespace re2 {
class RE2;
}

namespace freshd::daemon {

class UrlScope {
 public:
  // Compiles `crawler.include` and `crawler.exclude` and, for
  // "seed-domains", loads the Public Suffix List. InvalidArgument naming the
  // pattern when one does not compile (LoadConfig rejects those first);
  // Unavailable when the list cannot be loaded.
  [[nodiscard]] static Result<UrlScope> Create(const CrawlerConfig& crawler);

  UrlScope(UrlScope&&) noexcept;
  UrlScope& operator=(UrlScope&&) noexcept;
  ~UrlScope();

  // The host (and registrable domain) of `normalized_url` (a seed, or a
  // page already in the store) joins the scope.
  void Add(std::string_view normalized_url);

  // True if `normalized_url` (from parse::NormalizeUrl) is in scope.
  bool Contains(std::string_view normalized_url) const;

 private:
  UrlScope() = default;

  std::string mode_;               // seed-hosts, seed-domains or any
  std::set<std::string> hosts_;    // authorities (host[:port]) of seeds
  std::set<std::string> domains_;  // their registrable domains
  std::optional<parse::PublicSuffixList> public_suffixes_;  // seed-domains
  std::vector<std::unique_ptr<re2::RE2>> include_, exclude_;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_URL_SCOPE_H_
